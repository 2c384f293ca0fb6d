"""Errors that point at the cause, before any wait (issue 34): a --corpus that does not exist says
"not found" (naming an unset $RAGDIAG_DATA), a missing embedder key or an unreachable --base-url
fails before any embedding, an unreachable hub is one line, a batch still running is a note."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import not_found

runner = CliRunner()


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [("d1", "cats purr on the mat"), ("d2", "dogs bark at night"), ("d3", "birds sing at dawn")]
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs))
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "what purrs"}\n{"_id": "q2", "text": "what barks"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_error(done) -> str:
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert done.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ragdiag: error: "), done.output
    return lines[0]


def test_a_corpus_that_does_not_exist_is_not_found(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGDIAG_DATA", raising=False)
    missing = tmp_path / "nope" / "scifact"
    line = _one_error(runner.invoke(app, ["pipeline", "--corpus", str(missing), "--retriever", "bm25",
                                          "--out-dir", str(tmp_path / "out")]))
    assert line == f"ragdiag: error: --corpus {missing}: not found"
    line = _one_error(runner.invoke(app, ["pipeline", "--corpus", "$RAGDIAG_DATA/scifact", "--retriever", "bm25",
                                          "--out-dir", str(tmp_path / "out")]))
    assert line.endswith("--corpus $RAGDIAG_DATA/scifact: not found ($RAGDIAG_DATA is not set)")
    assert not (tmp_path / "out").exists()


def test_not_found_names_the_variable(monkeypatch):
    monkeypatch.delenv("RAGDIAG_DATA", raising=False)
    assert not_found("--corpus", Path("/scifact"), "RAGDIAG_DATA").endswith(
        "($RAGDIAG_DATA is not set: did the path start with $RAGDIAG_DATA/?)")
    monkeypatch.setenv("RAGDIAG_DATA", "/data")
    assert not_found("--corpus", Path("/scifact"), "RAGDIAG_DATA") == "--corpus /scifact: not found"
    assert "was not expanded" in not_found("--corpus", Path("$RAGDIAG_DATA/scifact"))


def test_an_api_embedder_without_its_key_fails_before_any_embedding(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    corpus = _beir(tmp_path / "beir")
    start = time.perf_counter()
    done = runner.invoke(app, ["pipeline", "--corpus", str(corpus), "--retriever", "dense:local", "--retriever",
                               "dense:openai:text-embedding-3-small", "--out-dir", str(tmp_path / "out")])
    assert time.perf_counter() - start < 2.0
    line = _one_error(done)
    assert "dense:openai:text-embedding-3-small: $OPENAI_API_KEY is not set" in line and "nothing was embedded" in line
    assert not (tmp_path / "out").exists()


def test_an_unreachable_base_url_fails_before_any_embedding(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus = _beir(tmp_path / "beir")
    url = f"http://127.0.0.1:{_free_port()}/v1"
    start = time.perf_counter()
    done = runner.invoke(app, ["pipeline", "--corpus", str(corpus), "--retriever", "dense:local", "--base-url", url,
                               "--out-dir", str(tmp_path / "out")])
    assert time.perf_counter() - start < 2.0
    line = _one_error(done)
    assert f"--base-url {url}: cannot reach 127.0.0.1:" in line and "Nothing was computed yet" in line
    assert not (tmp_path / "out").exists()


def test_an_unreachable_hub_is_one_line_without_retries(tmp_path, monkeypatch, capfd):
    from huggingface_hub import constants

    from ragdiag.data import loaders
    from ragdiag.retrieval.embedders import hub_offline_unless_reachable

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # restored after the test, as the constant below
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", constants.HF_HUB_OFFLINE)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty hub cache
    monkeypatch.setattr(loaders, "hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(RagdiagError) as caught:
        hub_offline_unless_reachable("someone/not-a-cached-model")
    assert str(caught.value) == ("sentence-transformers model 'someone/not-a-cached-model': the Hugging Face hub cannot "
                                 "be reached and the model is not in the local cache; connect once to download it, "
                                 "or give the path of a local model folder")
    corpus = _beir(tmp_path / "beir")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # the call above switched the hub libraries offline
    done = runner.invoke(app, ["robustness", "--corpus", str(corpus / "corpus.jsonl"), "--queries",
                               str(corpus / "queries.jsonl"), "--embedder", "st:someone/not-a-cached-model",
                               "--index-spec", "flat", "--k", "2"])
    assert done.exit_code == 2 and "Retrying" not in done.output + capfd.readouterr().err
    errors = [line for line in done.output.splitlines() if "error" in line.lower()]
    assert errors == [f"ragdiag: error: {caught.value}"]


def test_a_batch_still_running_is_a_note_not_an_error(tmp_path, monkeypatch):
    from tests.pipeline.tiny_data import write_tiny
    from tests.servers.batch_server import BatchServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    with BatchServer() as server:
        done = runner.invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--k", "2,5", "--out",
                                   str(tmp_path / "a.jsonl"), "--base-url", server.base_url, "--cache-dir",
                                   str(tmp_path / "cache"), "--batch", "openai", "--batch-dir", str(tmp_path / "b"),
                                   "--batch-poll", "0.01", "--batch-wait", "0", "--no-progress"])
    assert done.exit_code == 4
    assert "ragdiag: error:" not in done.stderr
    assert any(line.startswith("ragdiag: note: ") and "rerun" in line for line in done.stderr.splitlines())
