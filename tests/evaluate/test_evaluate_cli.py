"""``ragdiag evaluate`` end to end on the bundled graded fixture (values worked out by hand in the
fixture README), the JSON schema of issue 12, and one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "graded-utility"
GRADED = "ra_nwg,proc,pct_proc,nrecall4,nrecall5,hit,harm,unjudged"


def run_cli(*args: str):
    return CliRunner().invoke(app, ["evaluate", *args])


def fixture_args(*extra: str) -> list[str]:
    return ["--run", str(FIX / "bm25.jsonl"), "--run", str(FIX / "dense.trec"), "--qrels", str(FIX / "qrels.tsv"),
            "--k", "2", "--pool-depth", "5", *extra]


def metric(result: dict, run: str, name: str, k: int = 2) -> dict:
    block = next(r for r in result["runs"] if r["run"] == run)
    return next(m for m in block["metrics"] if m["metric"] == name and m["k"] == k)


@pytest.fixture(scope="module")
def fixture_json(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("eval") / "result.json"
    res = run_cli(*fixture_args("--answers", str(FIX / "graded.json"), "--format", "json", "--out", str(out),
                                "--bootstrap", "200", "--seed", "3"))
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


# hand-computed in fixtures/graded-utility/README.md: (value, n_defined)
HAND = {
    "bm25": {"ra_nwg": (5 / 12, 4), "proc": (0.75, 4), "pct_proc": (5 / 9, 3), "nrecall4": (1 / 6, 3),
             "nrecall5": (0.0, 2), "hit": (0.25, 4), "harm": (0.375, 4), "unjudged": (0.25, 4)},
    "dense": {"ra_nwg": (11 / 12, 4), "proc": (11 / 12, 4), "pct_proc": (1.0, 4), "nrecall4": (1.0, 3),
              "nrecall5": (1.0, 2), "hit": (0.75, 4), "harm": (0.25, 4), "unjudged": (0.125, 4)},
}


@pytest.mark.parametrize("run", ["bm25", "dense"])
def test_fixture_values_match_the_hand_computation(fixture_json, run):
    for name, (value, n) in HAND[run].items():
        entry = metric(fixture_json, run, name)
        assert entry["value"] == pytest.approx(value, abs=1e-12), name
        assert entry["n_defined"] == n, name
        low, high = entry["ci"]
        assert low <= entry["value"] + 1e-12 and entry["value"] <= high + 1e-12


def test_json_schema_of_issue_12(fixture_json):
    assert set(fixture_json) >= {"meta", "params", "runs", "comparisons", "run_record"}
    p = fixture_json["params"]
    assert p["k"] == [2] and p["pool_depth"] == 5 and p["gold"] == 4 and p["harm_max"] == 2
    assert (p["alpha"], p["cap4"], p["cap3"], p["fallback4"], p["fallback3"]) == (1.0, 0.8, 0.4, 0.8, 0.4)
    for run in fixture_json["runs"]:
        assert set(run) >= {"run", "metrics", "decision", "attribution"}
        assert all(set(m) >= {"metric", "k", "value", "ci", "n_defined"} for m in run["metrics"])
    assert all(set(c) >= {"a", "b", "metric", "k", "diff", "ci", "improved", "worsened"} for c in fixture_json["comparisons"])
    assert fixture_json["run_record"]["seeds"] == {"bootstrap": 3}
    assert fixture_json["meta"]["runs"][0]["skipped_queries"] == 1  # q9 has no judgements


def test_decisions_and_comparison(fixture_json):
    decisions = {r["run"]: r["decision"] for r in fixture_json["runs"]}
    assert decisions["bm25"]["verdict"] == "retrieval-bound"  # PROC 0.75 < 0.8
    assert decisions["dense"]["verdict"] == "near ceiling"
    ra = next(c for c in fixture_json["comparisons"] if c["metric"] == "ra_nwg")
    assert (ra["a"], ra["b"]) == ("bm25", "dense")
    assert ra["diff"] == pytest.approx(0.5) and ra["improved"] == 0.75 and ra["worsened"] == 0.0
    harm = next(c for c in fixture_json["comparisons"] if c["metric"] == "harm")
    assert harm["diff"] == pytest.approx(-0.125) and harm["improved"] == 0.25 and harm["worsened"] == 0.0


def test_stage_attribution(fixture_json):
    shares = {r["run"]: r["attribution"]["by_k"][0] for r in fixture_json["runs"]}
    counts = {run: {s: v["count"] for s, v in block["shares"].items()} for run, block in shares.items()}
    assert counts["bm25"] == {"ok": 0, "retrieval_miss": 2, "ordering_miss": 1, "generation_miss": 1}
    assert counts["dense"] == {"ok": 2, "retrieval_miss": 0, "ordering_miss": 0, "generation_miss": 1}
    assert shares["dense"]["graded_answers"] == 3  # q3's answer grade is null
    assert shares["dense"]["shares"]["ok"]["value"] == pytest.approx(2 / 3)


def test_table_csv_per_query_and_plot(tmp_path):
    per_query, plot, csv_out = tmp_path / "pq.jsonl", tmp_path / "p.png", tmp_path / "r.csv"
    res = run_cli(*fixture_args("--answers", str(FIX / "graded.json"), "--per-query", str(per_query),
                                "--plot", str(plot), "--bootstrap", "50", "--metrics", GRADED))
    assert res.exit_code == 0, res.output
    assert "retrieval-bound" in res.output and "cap4=0.8" in res.output and "seed 0" in res.output
    rows = [json.loads(line) for line in per_query.read_text().splitlines()]
    assert len(rows) == 8
    q4 = next(r for r in rows if r["run"] == "bm25" and r["query_id"] == "q4")
    assert q4["pct_proc"] is None and q4["stage"] == "retrieval_miss"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    res = run_cli(*fixture_args("--format", "csv", "--out", str(csv_out), "--bootstrap", "0"))
    assert res.exit_code == 0, res.output
    lines = csv_out.read_text().splitlines()
    assert lines[0].startswith("kind,run,b,metric,k,value")
    assert any(line.startswith("metric,bm25,,ra_nwg,2,0.41666") for line in lines)


def test_binary_qrels_are_read_as_grade_5(tmp_path):
    qrels = tmp_path / "binary.tsv"
    qrels.write_text("q1\t0\td1\t1\nq1\t0\td5\t0\nq2\t0\te1\t1\n")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "ids": ["d1", "d5"], "scores": [2, 1]}\n{"query_id": "q2", "ids": ["x"], "scores": [1]}\n')
    out = tmp_path / "r.json"
    res = run_cli("--run", str(run), "--qrels", str(qrels), "--k", "1", "--pool-depth", "2", "--format", "json", "--out", str(out))
    assert res.exit_code == 0, res.output
    result = json.loads(out.read_text())
    assert "grade 5" in result["meta"]["conventions"]["qrels"]
    assert metric(result, "run", "ra_nwg", 1)["value"] == pytest.approx(0.5)


def _bad(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case, expected", [
    ("unknown_queries", "none of the"),
    ("missing_query", "not in this run"),
    ("grade_out_of_range", "outside 1–5"),
    ("empty_run", "empty"),
    ("duplicate_ids", "twice"),
    ("unreadable", "not found"),
    ("pool_below_k", "pool depth"),
    ("bad_k", "--k"),
    ("bad_metric", "unknown metric"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, case, expected):
    qrels, run = FIX / "qrels.tsv", FIX / "bm25.jsonl"
    extra: list[str] = []
    if case == "unknown_queries":
        run = _bad(tmp_path, "r.jsonl", '{"query_id": "zz", "ids": ["a"], "scores": [1]}\n')
    elif case == "missing_query":
        run = _bad(tmp_path, "r.jsonl", '{"query_id": "q1", "ids": ["d1"], "scores": [1]}\n')
    elif case == "grade_out_of_range":
        qrels = _bad(tmp_path, "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t7\nq1\td2\t3\n")
    elif case == "empty_run":
        run = _bad(tmp_path, "r.jsonl", "\n")
    elif case == "duplicate_ids":
        run = _bad(tmp_path, "r.jsonl", '{"query_id": "q1", "ids": ["d1", "d1"], "scores": [2, 1]}\n')
    elif case == "unreadable":
        run = tmp_path / "absent.jsonl"
    elif case == "pool_below_k":
        extra = ["--pool-depth", "5", "--k", "10"]
    elif case == "bad_k":
        extra = ["--k", "ten"]
    elif case == "bad_metric":
        extra = ["--metrics", "ra_nwg,bleu"]
    res = run_cli("--run", str(run), "--qrels", str(qrels), *(extra or ["--k", "2", "--pool-depth", "5"]))
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), res.output
    assert expected in lines[0]


@pytest.mark.parametrize("flag, value", [("--cap4", "1.5"), ("--alpha", "-1"), ("--bootstrap", "-3"), ("--gold", "6"), ("--fallback3", "nan")])
def test_numeric_ranges_are_checked_before_work(flag, value):
    res = run_cli(*fixture_args(flag, value))
    assert res.exit_code == 2
    assert "Traceback" not in res.output


def test_output_never_overwrites_an_input(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_bytes((FIX / "bm25.jsonl").read_bytes())
    res = run_cli("--run", str(run), "--qrels", str(FIX / "qrels.tsv"), "--k", "2", "--pool-depth", "5", "--out", str(run))
    assert res.exit_code == 2 and "overwrite" in res.output
    assert run.read_bytes() == (FIX / "bm25.jsonl").read_bytes()
