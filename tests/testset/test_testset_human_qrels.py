"""``ragdiag testset --human-qrels``: the synthetic qrels certified against human ones from inside
the generation run, over the ``--retriever`` configurations, against the local chat test server (its
questions are computed by the server, never an LLM's). The English sample's own qrels and questions
are the human side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.chat_server import ChatServer

runner = CliRunner()
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "en-sample"
RETRIEVERS = ["bm25", "bm25:okapi", "bm25:lucene:k1=2.0,b=0.9", "bm25:lucene:k1=0.5,b=0.1", "hybrid:bm25+bm25:okapi"]


def _run(server: ChatServer, out: Path, cache: Path, *extra: str):
    return runner.invoke(app, ["testset", "--corpus", str(FIXTURE), "--n", "30", "--model", "test-model", "--base-url",
                               server.base_url, "--cache-dir", str(cache), "--no-progress", "--out-dir", str(out), *extra])


def _retrievers(names: list[str]) -> list[str]:
    return [arg for name in names for arg in ("--retriever", name)]


@pytest.fixture()
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_certificate_from_inside_the_run(tmp_path, key):
    out = tmp_path / "ts"
    with ChatServer() as server:
        result = _run(server, out, tmp_path / "cache", "--human-qrels", str(FIXTURE), *_retrievers(RETRIEVERS),
                      "--top", "3", "--bootstrap", "200")
    assert result.exit_code == 0, result.output
    assert "Kendall τ" in result.output and "label set A ranks the 5 systems" in result.output
    certificate = json.loads((out / "certificate.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["certificate"]["verdict"] == certificate["verdict"] and certificate["run_record"]
    assert [s["run"] for s in certificate["systems"]] == RETRIEVERS
    meta = certificate["meta"]
    assert meta["paired"] is False and meta["queries_a"] == manifest["counts"]["kept"]
    human = {line.split("\t")[0] for line in (FIXTURE / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    assert meta["queries_b"] == len(human) and meta["b"] == str(FIXTURE / "qrels" / "test.tsv")
    assert certificate["gap"] is None, "no dense retriever: no BM25 − dense gap"
    # the run files reproduce the certificate through testset certify
    runs = [Path(p) for p in meta["run_files"]]
    assert len(runs) == 5 and all(p.parent == out / "runs" for p in runs)
    again = runner.invoke(app, ["testset", "certify", "--a", str(out), "--b", str(FIXTURE), "--runs", *map(str, runs),
                                "--top", "3", "--bootstrap", "200"])
    assert again.exit_code == 0, again.output
    replayed = [line for line in again.output.splitlines() if line.startswith("Kendall τ")]
    assert replayed and replayed[0] in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--human-qrels", str(FIXTURE)], "--human-qrels needs at least 5 --retriever"),
    (["--human-qrels", str(FIXTURE), *_retrievers(RETRIEVERS[:4])], "got 4"),
    (["--human-qrels", str(FIXTURE), *_retrievers([*RETRIEVERS[:4], "bm25"])], "--retriever bm25 is given twice"),
    (["--human-qrels", str(FIXTURE), *_retrievers([*RETRIEVERS[:4], "sparse:x"])], "unknown kind 'sparse'"),
    (["--human-qrels", str(FIXTURE), *_retrievers(RETRIEVERS), "--top", "6"], "--top 6"),
    (["--human-qrels", str(FIXTURE), *_retrievers(RETRIEVERS), "--metric", "nope@10"], "nope"),
    (["--human-qrels", str(FIXTURE / "qrels" / "test.tsv"), *_retrievers(RETRIEVERS)], "give --human-queries"),
    (_retrievers(RETRIEVERS), "--retriever is for the certificate: give --human-qrels too"),
])
def test_refused_before_any_call(tmp_path, key, args, message):
    with ChatServer() as server:
        result = _run(server, tmp_path / "ts", tmp_path / "cache", *args)
        assert result.exit_code == 2 and message in result.output, result.output
        assert server.completed == 0 and not (tmp_path / "ts" / "manifest.json").exists()
        assert len(result.output.strip().splitlines()) == 1


def test_human_qrels_of_another_corpus_are_refused(tmp_path, key):
    other = tmp_path / "qrels.tsv"
    other.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{line.split(chr(9))[0]}\tnot-a-doc\t1\n" for line in (FIXTURE / "qrels" / "test.tsv").read_text().splitlines()[1:]))
    with ChatServer() as server:
        result = _run(server, tmp_path / "ts", tmp_path / "cache", "--human-qrels", str(other), "--human-queries",
                      str(FIXTURE / "queries.jsonl"), *_retrievers(RETRIEVERS))
        assert result.exit_code == 2 and "must judge the same corpus" in result.output and server.completed == 0
