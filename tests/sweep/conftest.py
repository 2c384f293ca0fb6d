"""Fixtures for sweep tests: a synthetic BEIR folder, the toy model and the embeddings test server
(module-scoped: one sweep run is shared by the tests that only read its files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.embeddings_server import EmbeddingsServer
from tests.servers.toy_model import ToyModel
from tests.sweep.synthetic_corpus import DIM, MODEL, write_corpus


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sweep")


@pytest.fixture(scope="module")
def corpus(workdir) -> Path:
    """20 queries: every answer and grade is a toy-model request. Enough for what the modules assert: in
    test_sweep_cli, nprobe=1's paired interval stays far below 0 ([-3.6, -2.0]) and the IVF grades rise
    2.2 → 5.0; the gate module still has even- and odd-numbered relevant documents."""
    return write_corpus(workdir / "synthetic", n_queries=20)


@pytest.fixture(scope="module")
def servers():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "test")
        patch.delenv("OPENAI_BASE_URL", raising=False)
        with ToyModel() as toy, EmbeddingsServer(dim=DIM) as embed:
            yield toy, embed


@pytest.fixture(scope="module")
def sweep_cli(workdir, servers):
    """Invoke ``ragdiag sweep ARGS`` against the toy model and the embeddings server."""
    toy, embed = servers

    def invoke(*args: str, cache_dir: Path | None = None):
        full = ["sweep", *map(str, args), "--embedder", f"openai:{MODEL}", "--embed-base-url", embed.base_url,
                "--model", "toy", "--base-url", toy.base_url, "--cache-dir", str(cache_dir or workdir / "cache"),
                "--no-progress", "--latency-queries", "20", "--qps-repeats", "1"]
        return CliRunner().invoke(app, full)

    return invoke
