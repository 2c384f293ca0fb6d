"""The folder ``ragdiag testset`` writes reads back into ``index``, ``evaluate``, ``compare`` and
``triage``, end to end over the bundled English sample against the local chat test server (its
questions, answers and grades are computed by the server from word lists, never an LLM's). The index
is BM25 only (``--embedder none``), so no model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.chat_server import ChatServer

runner = CliRunner()
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "en-sample"


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, (args[:2], result.output)
    return result.output


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A test collection of 30 questions from the English sample (two passages of 15–30 words per
    document, so that compare's clusters by source document hold more than one question), an index over its corpus, and two
    BM25 runs (Lucene with stemming, Okapi without) over its queries."""
    tmp = tmp_path_factory.mktemp("readback")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test")
    mp.delenv("OPENAI_BASE_URL", raising=False)
    try:
        with ChatServer() as server:
            _ok(["testset", "--corpus", str(FIXTURE), "--n", "30", "--per-doc", "2", "--min-words", "15",
                 "--max-words", "30", "--model", "test-model", "--base-url", server.base_url,
                 "--cache-dir", str(tmp / "cache"), "--no-progress", "--out-dir", str(tmp / "ts")])
        ts = tmp / "ts"
        for name, bm25 in (("lucene", ["--bm25", "bm25:lucene"]), ("okapi", ["--bm25", "bm25:okapi", "--no-stem"])):
            _ok(["index", "build", "--corpus", str(ts), "--embedder", "none", *bm25, "--out-dir", str(tmp / f"index-{name}"),
                 "--cache-dir", str(tmp / "cache")])
            _ok(["retrieve", "--index-dir", str(tmp / f"index-{name}"), "--queries", str(ts / "queries.jsonl"),
                 "--mode", "bm25", "--k", "10", "--out", str(tmp / f"run-{name}.jsonl")])
        yield tmp
    finally:
        mp.undo()


def test_index_and_evaluate_read_the_folder(folder):
    ts = folder / "ts"
    queries = [json.loads(line)["_id"] for line in (ts / "queries.jsonl").read_text().splitlines()]
    run = [json.loads(line) for line in (folder / "run-lucene.jsonl").read_text().splitlines()]
    assert len(queries) >= 20 and {r["query_id"] for r in run} == set(queries)
    out = folder / "eval.json"
    _ok(["evaluate", "--run", str(folder / "run-lucene.jsonl"), "--qrels", str(ts / "qrels" / "test.tsv"),
         "--metrics", "recall", "--k", "10", "--bootstrap", "0", "--out", str(out)])
    assert "recall" in out.read_text()
    # the consistency filter kept only questions whose source document BM25 puts in its top 10
    sources = {json.loads(line)["_id"]: json.loads(line)["metadata"]["source_doc"]
               for line in (ts / "queries.jsonl").read_text().splitlines()}
    assert all(sources[r["query_id"]] in r["ids"] for r in run)


def test_compare_clusters_by_source_document(folder):
    ts = folder / "ts"
    out = folder / "compare.json"
    _ok(["compare", "--base", str(folder / "run-lucene.jsonl"), "--new", str(folder / "run-okapi.jsonl"),
         "--qrels", str(ts / "qrels" / "test.tsv"), "--metrics", "ndcg@10", "--cluster-by", "doc",
         "--queries", str(ts / "queries.jsonl"), "--out", str(out)])
    meta = json.loads(out.read_text())["meta"]
    sources = {json.loads(line)["metadata"]["source_doc"] for line in (ts / "queries.jsonl").read_text().splitlines()}
    assert meta["cluster_by"] == "doc" and meta["clusters"] == len(sources) < meta["queries"]
    assert meta["test_detail"].startswith(f"cluster-robust t (CR1, {len(sources)} clusters")


def test_triage_reads_the_folder_and_its_answers(folder):
    ts = folder / "ts"
    out = folder / "triage"
    with ChatServer() as server:
        _ok(["triage", "--corpus", str(ts), "--run", str(folder / "run-lucene.jsonl"), "--answers", str(ts / "answers.jsonl"),
             "--all", "--max-queries", "8", "--model", "test-model", "--base-url", server.base_url, "--out-dir", str(out),
             "--cache-dir", str(folder / "cache"), "--no-progress", "--bootstrap", "50"])
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    sources = {json.loads(line)["_id"]: json.loads(line)["metadata"]["source_doc"]
               for line in (ts / "queries.jsonl").read_text().splitlines()}
    assert len(rows) == 8 and all(r["relevant"] == [sources[r["id"]]] for r in rows)
    meta = json.loads((out / "triage.json").read_text())["meta"]
    assert meta["graded_against"] == "dataset reference answers (--answers)" and meta["retriever"].startswith("run:")
