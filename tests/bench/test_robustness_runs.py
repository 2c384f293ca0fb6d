"""robustness over runs: TREC and jsonl runs, several runs side by side, and the checks that keep
the numbers honest (k deeper than a run, duplicated documents, mixed inputs, outputs over inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.commands.robustness import RobustnessRequest, run
from ragdiag.errors import RagdiagError

runner = CliRunner()
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d9 0\n"  # TREC layout; q3 has no relevant document


@pytest.fixture()
def files(tmp_path: Path):
    qrels = tmp_path / "qrels.dev.small.tsv"
    qrels.write_text(QRELS)
    good = tmp_path / "good.trec"
    good.write_text("q1 Q0 d1 1 9.0 a\nq1 Q0 d2 2 8.0 a\nq1 Q0 d7 3 1.0 a\nq2 Q0 d3 1 5.0 a\nq2 Q0 d8 2 4.0 a\nq2 Q0 d5 3 3.0 a\n")
    weak = tmp_path / "weak.jsonl"
    weak.write_text(json.dumps({"query_id": "q1", "ids": ["d7", "d1", "d4"], "scores": [3, 2, 1]}) + "\n"
                    + json.dumps({"query_id": "q2", "ids": ["d8", "d5", "d6"], "scores": [3, 2, 1]}) + "\n")
    return tmp_path, qrels, good, weak


def _robustness(*args: str):
    return runner.invoke(app, ["robustness", *args, "--format", "json"])


def test_several_runs_side_by_side_labelled_by_file_name(files):
    tmp, qrels, good, weak = files
    result = _robustness("--run", str(good), "--run", str(weak), "--qrels", str(qrels), "--k", "2",
                         "--per-query", str(tmp / "pq.jsonl"), "--out", str(tmp / "r.json"))
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    points = out["points"]
    assert [p["label"] for p in points] == ["good.trec", "weak.jsonl"]
    # good: q1 2/2, q2 1/1 -> 1.0; weak at k=2: q1 1/2 (d1 at rank 2), q2 0/1 -> 0.25
    assert [p["recall_mean"] for p in points] == [1.0, 0.25]
    assert points[1]["zero_recall_queries"] == 1 and points[0]["n_queries"] == 2
    assert [r["label"] for r in out["meta"]["runs"]] == ["good.trec", "weak.jsonl"]
    assert "run" not in out["meta"]  # the single-run keys only when there is one run
    rows = [json.loads(line) for line in (tmp / "pq.jsonl").read_text().splitlines()]
    assert sorted({r["point"] for r in rows}) == [0, 1]
    saved = json.loads((tmp / "r.json").read_text())
    assert saved["points"] == points and saved["run_record"]["command"] == "ragdiag robustness"
    table = runner.invoke(app, ["robustness", "--run", str(good), "--run", str(weak), "--qrels", str(qrels), "--k", "2"],
                          env={"COLUMNS": "160"})
    assert table.exit_code == 0 and "good.trec" in table.stdout and "weak.jsonl" in table.stdout
    narrow = runner.invoke(app, ["robustness", "--run", str(good), "--run", str(weak), "--qrels", str(qrels), "--k", "2"],
                           env={"COLUMNS": "80"})  # fits an 80-column terminal: wrapped, never cut with "…"
    assert "…" not in narrow.stdout and max(map(len, narrow.stdout.splitlines())) <= 80


def test_single_run_keeps_the_earlier_meta_keys(files):
    _, qrels, good, _ = files
    result = _robustness("--run", str(good), "--qrels", str(qrels), "--k", "3")
    meta = json.loads(result.stdout)["meta"]
    assert meta["run"] == str(good) and meta["queries_missing_from_run"] == 0 and len(meta["run_sha256"]) == 64


def test_k_deeper_than_the_run_is_an_error(files):
    _, qrels, good, _ = files
    result = _robustness("--run", str(good), "--qrels", str(qrels), "--k", "4")
    assert result.exit_code == 2
    assert "k=4 is larger than the depth of run" in result.stderr and "at most 3" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_duplicate_documents_in_a_run_are_rejected(files):
    tmp, qrels, _, _ = files
    dup = tmp / "dup.jsonl"
    dup.write_text(json.dumps({"query_id": "q1", "ids": ["d1", "d1", "d1"], "scores": [1, 1, 1]}) + "\n")
    result = _robustness("--run", str(dup), "--qrels", str(qrels), "--k", "3")
    assert result.exit_code == 2 and "ranks document 'd1' twice" in result.stderr


def test_vectors_and_runs_together_are_refused(files, tmp_path):
    _, qrels, good, _ = files
    base = tmp_path / "X.npy"
    np.save(base, np.eye(4, dtype=np.float32))
    with pytest.raises(RagdiagError, match="one kind of input, got vectors .* and runs with qrels"):
        run(RobustnessRequest(base=base, queries=base, run=good, qrels=qrels))
    result = _robustness("--base-vectors", str(base), "--query-vectors", str(base), "--run", str(good), "--qrels", str(qrels))
    assert result.exit_code == 2 and "one kind of input" in result.stderr


@pytest.mark.parametrize("field,value,message", [
    ("latency_queries", 0, "latency queries must be positive"), ("latency_queries", -5, "latency queries must be positive"),
    ("repeats", 0, "repeats must be positive"), ("k", 0, "k must be positive"),
])
def test_library_checks_ranges_before_work(files, field, value, message):
    _, qrels, good, _ = files
    with pytest.raises(RagdiagError, match=message):
        run(RobustnessRequest(run=good, qrels=qrels, **{field: value}))


def test_latency_queries_zero_rejected_by_the_cli(files):
    _, qrels, good, _ = files
    result = _robustness("--run", str(good), "--qrels", str(qrels), "--latency-queries", "0")
    assert result.exit_code == 2 and "latency-queries" in result.stderr


def test_outputs_never_overwrite_a_run(files):
    _, qrels, good, weak = files
    before = good.read_bytes()
    for flag in ("--out", "--per-query"):
        result = _robustness("--run", str(good), "--run", str(weak), "--qrels", str(qrels), "--k", "2", flag, str(good))
        assert result.exit_code == 2 and "overwrite" in result.stderr
    assert good.read_bytes() == before


def test_retrieve_trec_output_feeds_robustness(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in
                              enumerate(["volcano lava", "green tea caffeine", "dogs bark", "percolating coffee"])))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "lava from a volcano"}) + "\n"
                       + json.dumps({"_id": "q2", "text": "coffee percolates"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\td0\t1\nq2\td3\t1\n")  # headerless BEIR: the first judgement counts
    built = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp_path / "idx")])
    assert built.exit_code == 0, built.output
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25",
                                 "--k", "2", "--format", "trec", "--tag", "bm25-lucene", "--out", str(tmp_path / "run.trec")])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines[0].startswith("q1 Q0 d0 1 ") and lines[0].endswith(" bm25-lucene")
    assert any(line.startswith("q2 Q0 d3 1 ") for line in lines)  # stemming: "percolates" finds "percolating"
    result = _robustness("--run", str(tmp_path / "run.trec"), "--qrels", str(qrels), "--k", "1")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["points"][0]["recall_mean"] == 1.0
    refused = runner.invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(queries),
                                  "--mode", "dense", "--k", "2", "--out", str(tmp_path / "d.jsonl")])
    assert refused.exit_code == 2 and "no dense index" in refused.stderr


def test_run_queries_without_qrels_are_counted_named_and_the_table_is_named_by_the_run(files):
    """q3 (qrels without a relevant passage) and q4 (no qrels at all) are ranked by the run but cannot
    be scored: counted and named, in the JSON and under the table; the table is titled by the run's
    own name, not by a similarity metric the run never used."""
    tmp, qrels, good, _ = files
    extra = tmp / "extra.trec"
    extra.write_text(good.read_text() + "q3 Q0 d9 1 2.0 a\nq3 Q0 d1 2 1.0 a\nq4 Q0 d1 1 1.0 a\nq4 Q0 d2 2 0.5 a\n")
    result = _robustness("--run", str(extra), "--qrels", str(qrels), "--k", "2")
    assert result.exit_code == 0, result.output
    (described,) = json.loads(result.stdout)["meta"]["runs"]
    assert described["queries_without_qrels"] == 2 and described["queries_without_qrels_ids"] == ["q3", "q4"]
    table = runner.invoke(app, ["robustness", "--run", str(extra), "--qrels", str(qrels), "--k", "2"],
                          env={"COLUMNS": "160"})
    assert table.exit_code == 0, table.output
    text = " ".join(table.stdout.split())
    assert "Robustness-δ@2 (extra.trec, recall:" in text and "cosine" not in text
    assert "extra.trec: 2 ranked queries without qrels (no relevant passage) left out: q3, q4" in text
