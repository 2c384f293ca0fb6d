"""Stages pass objects in memory: ``pipeline --corpus`` and ``sweep`` never read back a file they wrote.

Every ``open`` of the process is seen through the ``open`` audit event (:func:`sys.addaudithook`, PEP 578),
which also fires for ``io.open``, ``Path.open``/``read_text`` and C extensions that open through Python.
A file the command wrote (an output: in its output folder) that is later opened for reading is a
re-read. The LLM is the toy model of ``tests/servers`` (a test server, not an LLM), the embeddings the
embeddings test server, both on 127.0.0.1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.commands.pipeline import PipelineRequest, run
from ragdiag.llm.client import ClientConfig
from tests.servers.embeddings_server import EmbeddingsServer
from tests.servers.toy_model import ToyModel
from tests.sweep.synthetic_corpus import DIM, MODEL, write_corpus

_OPENS: list[tuple[str, str]] | None = None


def _hook(event: str, args: tuple) -> None:
    if event == "open" and _OPENS is not None and isinstance(args[0], (str, bytes, os.PathLike)):
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        _OPENS.append((os.fsdecode(args[0]), mode or "r"))


sys.addaudithook(_hook)  # hooks cannot be removed: it records only while _OPENS is a list


def re_reads(opens: list[tuple[str, str]], out_dir: Path) -> list[str]:
    """Outputs under ``out_dir`` opened for reading after they were written (temporary files excluded)."""
    out = str(out_dir.resolve())
    written: set[str] = set()
    again = []
    for raw, mode in opens:
        path = str(Path(raw).resolve())
        if not path.startswith(out + os.sep) or Path(path).name.startswith("."):
            continue
        if set(mode) & set("wax+"):
            written.add(path)
        elif path in written or Path(path).exists():
            again.append(path)
    return again


def _run(args: list[str]) -> tuple[int, list[tuple[str, str]], str]:
    global _OPENS
    _OPENS = []
    try:
        result = CliRunner().invoke(app, args)
    finally:
        opens, _OPENS = _OPENS, None
    return result.exit_code, opens, result.output


def _run_command(request: PipelineRequest) -> list[tuple[str, str]]:
    global _OPENS
    _OPENS = []
    try:
        run(request)
    finally:
        opens, _OPENS = _OPENS, None
    return opens


@pytest.fixture()
def servers(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ToyModel() as toy, EmbeddingsServer(dim=DIM) as embed:
        yield toy, embed


def test_pipeline_corpus_reads_none_of_its_outputs(tmp_path, servers):
    """``ragdiag pipeline --corpus`` as :func:`ragdiag.commands.pipeline.run` runs it (the rendering of its
    result on the terminal is the renderers' business)."""
    toy, embed = servers
    corpus = write_corpus(tmp_path / "synthetic", n_docs=60, n_queries=6)
    qrels = corpus / "qrels" / "test.tsv"  # graded qrels: the evaluate stage runs on the run files too
    rows = qrels.read_text().splitlines()
    qrels.write_text("\n".join([rows[0]] + [r[:-1] + ("3" if i % 2 else "2") for i, r in enumerate(rows[1:])]) + "\n")
    out = tmp_path / "run"
    config = ClientConfig(model="toy", base_url=toy.base_url, cache_dir=tmp_path / "cache", workers=2)
    opens = _run_command(PipelineRequest(out_dir=out, config=config, ks=(1, 3), corpus=corpus, min_samples=1,
                                         retrievers=("bm25", f"dense:openai:{MODEL}"), embed_base_url=embed.base_url,
                                         progress=False))
    assert (out / "corpus_run.json").is_file() and (out / "graded.json").is_file()
    assert (out / "graded.json.manifest.json").is_file() and (out / "answers.jsonl").is_file()
    assert (out / "evaluation.json").is_file() and len(list((out / "runs").iterdir())) == 2
    assert any(Path(p).name == "corpus.jsonl" for p, _ in opens)  # the hook sees the inputs being read
    assert re_reads(opens, out) == [], "\n".join(re_reads(opens, out))


def test_sweep_reads_none_of_its_outputs(tmp_path, servers):
    toy, embed = servers
    corpus = write_corpus(tmp_path / "synthetic", n_docs=60, n_queries=6)
    out = tmp_path / "sweep"
    code, opens, output = _run(["sweep", "--corpus", str(corpus), "--index", "hnsw:M=8,efSearch=8|16",
                                "--k", "3", "--out-dir", str(out), "--embedder", f"openai:{MODEL}",
                                "--embed-base-url", embed.base_url, "--model", "toy", "--base-url", toy.base_url,
                                "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--latency-queries", "5",
                                "--qps-repeats", "1", "--bootstrap", "50", "--plot"])
    assert code == 0, output
    assert (out / "sweep.json").is_file()
    assert any(Path(p).name == "corpus.jsonl" for p, _ in opens)
    assert re_reads(opens, out) == [], "\n".join(re_reads(opens, out))


def test_pipeline_corpus_on_the_command_line_reads_none_of_its_outputs(tmp_path, servers):
    """The same through the CLI: the terminal's rendering of the result reads no output back either."""
    toy, embed = servers
    corpus = write_corpus(tmp_path / "synthetic", n_docs=60, n_queries=6)
    out = tmp_path / "run"
    code, opens, output = _run(["pipeline", "--corpus", str(corpus), "--retriever", "bm25",
                                "--retriever", f"dense:openai:{MODEL}", "--embed-base-url", embed.base_url,
                                "--k", "1,3", "--min-samples", "1", "--out-dir", str(out), "--model", "toy",
                                "--base-url", toy.base_url, "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code == 0, output
    assert (out / "correlation.json").is_file() and (out / "graded.json").is_file()
    assert any(Path(p).name == "corpus.jsonl" for p, _ in opens)
    assert re_reads(opens, out) == [], "\n".join(re_reads(opens, out))
