"""``ragdiag sweep`` end to end on the synthetic corpus with the toy model (test server, not an LLM)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.io.run_record import without_run_record

IVF = "ivf:nlist=16,nprobe=1|2|4|16"
HNSW = "hnsw:M=4,efConstruction=8,efSearch=1|2|16"


def _load(out):
    result = json.loads((out / "sweep.json").read_text())
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    return result, rows


@pytest.fixture(scope="module")
def swept(workdir, corpus, sweep_cli, servers):
    out = workdir / "sweep"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "200",
                    "--delta", "0.2,0.6,1.0", "--out-dir", out, "--plot")
    assert res.exit_code == 0, res.output
    return out, res, servers[0]


def test_controls_bound_the_points_and_grades_fall_with_nprobe(swept):
    out, _, _ = swept
    result, _ = _load(out)
    controls = {c["name"]: c for c in result["controls"]}
    # exact k-NN always shows the relevant document: the toy judge gives 5; empty gives 1. Without --answers
    # the gold control would grade the ideal answer against itself: it is left out and said so
    assert controls["exact"]["grade_mean"] == 5.0 and controls["empty"]["grade_mean"] == 1.0
    assert "gold" not in controls and result["meta"]["gold_control_informative"] is False
    grades = [p["grade_mean"] for p in result["points"]]
    assert all(1.0 <= g <= 5.0 for g in grades)
    ivf = [p for p in result["points"] if p["index"] == "ivf"]
    assert [p["params"]["nprobe"] for p in ivf] == [1, 2, 4, 16]
    ivf_grades = [p["grade_mean"] for p in ivf]
    assert ivf_grades == sorted(ivf_grades) and ivf_grades[0] < ivf_grades[-1] == 5.0
    # nprobe=1 searches one of 16 lists: it misses relevant documents, and the paired interval says so
    first = ivf[0]
    assert first["recall_mean"] < 1 and first["worse_share"] > 0
    assert first["grade_diff_vs_exact"]["ci"][1] < 0
    assert set(first["robustness"]) == {"0.2", "0.6", "1"}


def test_reused_calls_are_counted(swept):
    out, _, toy = swept
    result, rows = _load(out)
    n = result["meta"]["n_queries"]
    full = next(p for p in result["points"] if p["params"].get("nprobe") == 16)
    # nprobe = nlist is exhaustive: the same ordered top-K as exact for every query, so no new call
    assert full["recall_mean"] == 1.0
    assert full["calls_sent"] == 0 and full["calls_reused"] == 2 * n
    for entry in result["points"] + result["controls"]:
        assert entry["calls_sent"] + entry["calls_reused"] == 2 * n  # one answer + one grade per query
    ideal_sent = sum(r["sent"] for r in map(json.loads, (out / "answers.jsonl").read_text().splitlines())
                     if r["kind"] == "ideal")
    sent = ideal_sent + sum(e["calls_sent"] for e in result["points"] + result["controls"])
    assert sent == toy.requests == result["meta"]["calls"]["calls"]
    assert len(rows) == n * (len(result["points"]) + 2)  # exact and empty (gold left out without --answers)
    assert {"point", "query", "recall", "grade", "ids"} <= set(rows[0])


def test_schema_and_plots(swept):
    out, res, _ = swept
    result, _ = _load(out)
    assert {"meta", "points", "controls", "delta_calibration", "recall_buckets", "recommendation", "run_record"} <= set(result)
    point = result["points"][0]
    for key in ("index", "params", "recall_mean", "robustness", "qps_batch", "latency_ms", "grade_mean", "grade_ci",
                "grade_diff_vs_exact", "worse_share", "calls_sent", "calls_reused"):
        assert key in point
    assert {"p50", "p99"} <= set(point["latency_ms"]) and {"value", "ci"} == set(point["grade_diff_vs_exact"])
    assert [c["delta"] for c in result["delta_calibration"]] == [0.2, 0.6, 1.0]
    assert sum(b["n"] for b in result["recall_buckets"]) == result["meta"]["n_queries"] * len(result["points"])
    rec = result["recommendation"]
    assert rec["point"] is not None and rec["grade_diff_vs_exact"]["ci"][1] >= 0
    qualifying = [p for p in result["points"] if p["grade_diff_vs_exact"]["ci"][1] >= 0]
    assert rec["qps_batch"] == max(p["qps_batch"] for p in qualifying)
    assert "recommendation:" in res.output
    for png in ("sweep_grade.png", "sweep_qps.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_warm_rerun_sends_nothing_and_reproduces(workdir, corpus, sweep_cli, servers, swept):
    out, _, toy = swept
    before = toy.requests
    again = workdir / "again"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "200",
                    "--delta", "0.2,0.6,1.0", "--out-dir", again, "--max-calls", "0")
    assert res.exit_code == 0, res.output
    assert toy.requests == before
    first, second = _load(out)[0], _load(again)[0]
    assert all(p["calls_sent"] == 0 for p in second["points"] + second["controls"])
    def strip(r):
        return [{k: v for k, v in p.items() if k not in ("qps_batch", "qps_batch_runs", "latency_ms", "build_s",
                                                                       "calls_sent", "calls_reused")} for p in r["points"]]
    assert strip(first) == strip(second)
    assert first["delta_calibration"] == second["delta_calibration"]
    assert without_run_record(first)["recall_buckets"] == second["recall_buckets"]


def test_max_calls_refuses_before_any_call(tmp_path, corpus, sweep_cli, servers):
    toy, _ = servers
    before = toy.requests
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--k", "5", "--out-dir", tmp_path / "o", "--max-calls", "10",
                    cache_dir=tmp_path / "fresh-cache")
    assert res.exit_code == 2
    assert "--max-calls 10: this run needs" in res.output and "nothing was sent" in res.output
    assert toy.requests == before and not (tmp_path / "o" / "sweep.json").exists()


def test_per_query_grades_in_parquet(workdir, corpus, sweep_cli, servers, swept):
    """``--parquet``: per_query.parquet holds the rows of per_query.jsonl; correlate --table reads it."""
    import pyarrow.parquet as pq

    out, _, toy = swept
    before = toy.requests
    pq_out = workdir / "parquet"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "200",
                    "--delta", "0.2,0.6,1.0", "--out-dir", pq_out, "--max-calls", "0", "--parquet")
    assert res.exit_code == 0, res.output
    assert toy.requests == before and not (pq_out / "per_query.jsonl").exists()
    assert pq.read_table(pq_out / "per_query.parquet").to_pylist() == _load(out)[1]
    corr = CliRunner().invoke(app, ["correlate", "--table", str(pq_out / "per_query.parquet"), "--grade-col", "grade",
                                    "--measure-cols", "recall", "--group-col", "point", "--min-samples", "3"])
    assert corr.exit_code == 0, corr.output
