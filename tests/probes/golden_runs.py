"""The probe runs whose JSON outputs are kept in tests/probes/golden/ (written by the code before
issue 17's refactor): names and noise through the local embeddings server (no model), names on own
queries and noise against qrels on the small BEIR set next to them."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app
from tests.golden import comparable
from tests.servers.embeddings_server import EmbeddingsServer

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path("tests/probes/golden")  # relative to REPO: the paths written into meta stay the same
EMBEDDER = ["--embedder", "openai:text-embedding-3-small"]
DATA = {"queries": str(GOLDEN / "queries.jsonl"), "corpus": str(GOLDEN / "corpus.jsonl"),
        "qrels": str(GOLDEN / "qrels.tsv")}
RUNS = {
    "names": ["probe", "names", "--lang", "en,fr", *EMBEDDER, "--n-queries", "3", "--runs", "2", "--seed", "2"],
    "noise": ["noise", *EMBEDDER, "--queries", DATA["queries"], "--corpus", DATA["corpus"], "--qrels",
                   DATA["qrels"], "--k", "5", "--levels", "0,2,4", "--variants", "2", "--seed", "4",
                   "--bootstrap", "50"],
    "names_real": ["probe", "names", *EMBEDDER, "--queries", DATA["queries"], "--corpus", DATA["corpus"],
                        "--qrels", DATA["qrels"], "--k", "5", "--bootstrap", "50", "--seed", "3"],
}


def run_text(name: str, tmp: Path, monkeypatch, fmt: str = "json") -> str:
    """Run one golden command from the repository root against a fresh embeddings server and cache;
    the text written to --out, with the server's port replaced by PORT."""
    monkeypatch.chdir(REPO)
    with EmbeddingsServer(dim=16) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp / f"{name}.{fmt}"
        done = CliRunner().invoke(app, [*RUNS[name], "--format", fmt, "--out", str(out),
                                        "--cache-dir", str(tmp / "cache")])
        assert done.exit_code == 0, done.output
        return unported(out.read_text(encoding="utf-8"), server.base_url)


def unported(text: str, base_url: str) -> str:
    """The embedder identity names the test server's URL; its port changes from run to run."""
    return text.replace(base_url, "http://127.0.0.1:PORT/v1")


def golden_text(name: str) -> str:
    """A golden file as written, its server port replaced by PORT."""
    text = (REPO / GOLDEN / name).read_text(encoding="utf-8")
    return re.sub(r"http://127\.0\.0\.1:\d+/v1", "http://127.0.0.1:PORT/v1", text)


def without_run_record(doc):
    """The document as a golden comparison sees it (:func:`tests.golden.comparable`)."""
    return comparable(doc)
