"""Issue 39: ``triage`` on the user's own material — ``--run`` (the pools from their run, TREC or
run.jsonl), ``--ids`` (a list) and ``--from-compare deltas.jsonl`` (compare's regressed queries, most
regressed first); bad selections stop in one line before any call. Against the fault-model test server
(test-server replies, never an LLM's)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer

FIXTURE = resource_path("fixtures", "triage-synthetic")


def _triage(server: FaultServer, out: Path, *args: str):
    return CliRunner().invoke(app, ["triage", "--corpus", str(FIXTURE), "--answers", str(FIXTURE / "answers.jsonl"),
                                    "--model", "test-model", "--base-url", server.base_url, "--out-dir", str(out),
                                    "--cache-dir", str(out.parent / "cache"), "--no-progress", "--bootstrap", "50",
                                    "--all", *map(str, args)])


def _ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (out / "per_query.jsonl").read_text().splitlines()]


def _corpus_ids() -> list[str]:
    return [json.loads(line)["_id"] for line in (FIXTURE / "corpus.jsonl").read_text().splitlines()]


def test_ids_triage_only_the_named_queries(server, tmp_path):
    done = _triage(server, tmp_path / "out", "--ids", "q002,q001")
    assert done.exit_code == 0, done.output
    assert sorted(_ids(tmp_path / "out")) == ["q001", "q002"]


def test_from_compare_triages_the_regressed_queries(server, tmp_path):
    deltas = tmp_path / "deltas.jsonl"
    deltas.write_text("".join(json.dumps(r) + "\n" for r in [
        {"query_id": "q001", "ndcg@10": -0.5, "ndcg@10:base": 0.9, "ndcg@10:new": 0.4},
        {"query_id": "q002", "ndcg@10": 0.1, "ndcg@10:base": 0.5, "ndcg@10:new": 0.6},
        {"query_id": "q003", "ndcg@10": -0.2, "ndcg@10:base": 0.7, "ndcg@10:new": 0.5}]))
    done = _triage(server, tmp_path / "out", "--from-compare", deltas)
    assert done.exit_code == 0, done.output
    assert sorted(_ids(tmp_path / "out")) == ["q001", "q003"]
    capped = _triage(server, tmp_path / "capped", "--from-compare", deltas, "--max-queries", "1")
    assert capped.exit_code == 0, capped.output
    assert _ids(tmp_path / "capped") == ["q001"]  # the most regressed first


def test_run_gives_the_pools(server, tmp_path):
    docs = _corpus_ids()
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 {d} {r} {30 - r} mine\n" for q in ("q001", "q002")
                           for r, d in enumerate(docs[:25], start=1)))
    done = _triage(server, tmp_path / "out", "--run", run, "--ids", "q001,q002")
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "out" / "triage.json").read_text())
    assert result["meta"]["retriever"] == f"run:{run}"


def _error(done, server: FaultServer, before: int) -> str:
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), done.output
    assert server.requests == before
    return lines[0]


def test_bad_selections_stop_in_one_line_before_any_call(server, tmp_path):
    before = server.requests
    out = tmp_path / "out"
    assert "not a judged query" in _error(_triage(server, out, "--ids", "q001,nope"), server, before)
    assert "given twice" in _error(_triage(server, out, "--ids", "q001,q001"), server, before)
    run = tmp_path / "run.trec"
    run.write_text("q001 Q0 not-a-passage 1 1.0 mine\n")
    assert "has no ranking" in _error(_triage(server, out, "--run", run, "--ids", "q002"), server, before)
    assert "not in the corpus" in _error(_triage(server, out, "--run", run, "--ids", "q001"), server, before)
    texts_only = CliRunner().invoke(app, ["triage", "--texts", "t.json", "--ranked", "r.json", "--run", str(run),
                                          "--model", "m", "--out-dir", str(out)])
    assert "--run needs --corpus" in _error(texts_only, server, before)
    flat = tmp_path / "flat.jsonl"
    flat.write_text(json.dumps({"query_id": "q001", "ndcg@10": 0.0}) + "\n")
    assert "no query regressed" in _error(_triage(server, out, "--from-compare", flat), server, before)
