"""Constrained selection (--require) and the recall floor (--min-recall): parsing, filtering against a
direct numpy filter, the binding constraint, CLI errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.bench.constraints import parse_constraint, select
from ragdiag.cli import app

runner = CliRunner()


def _point(recall, r03, qps, zero=0):
    return {"recall_mean": recall, "robustness": {"0.3": r03, "0.9": recall - 0.1}, "qps_batch": {"median": qps},
            "latency_ms": {"p50": 1000 / qps, "p95": 2000 / qps, "p99": 3000 / qps}, "zero_recall_queries": zero,
            "build_s": 1.0, "index_bytes": 2**20}


def test_selection_equals_a_direct_filter():
    rng = np.random.default_rng(0)
    recall, r03, qps = rng.uniform(0.5, 1, 40), rng.uniform(0.8, 1, 40), rng.uniform(1e3, 1e5, 40)
    points = [_point(*v) for v in zip(recall, r03, qps)]
    constraints = [parse_constraint(t) for t in ("recall>=0.8", "R0.3 >= 0.9", "qps>20000")]
    out = select(points, constraints, [f"p{i}" for i in range(40)])
    expected = np.flatnonzero((recall >= 0.8) & (r03 >= 0.9) & (qps > 20000))
    assert [row["point"] for row in out["passing"]] == expected.tolist()
    assert "recall" not in out["unconstrained"] and "R0.3" not in out["unconstrained"] and "R0.9" in out["unconstrained"]
    assert out["passing"][0]["R0.9"] == pytest.approx(recall[expected[0]] - 0.1)
    assert out["satisfied_by"]["recall>=0.8"] == int((recall >= 0.8).sum())


def test_binding_constraint_is_named():
    points = [_point(0.95, 0.99, 1000), _point(0.85, 0.99, 60000), _point(0.7, 0.9, 90000)]
    constraints = [parse_constraint(t) for t in ("recall>=0.9", "qps>=50000", "R0.3>=0.95")]
    out = select(points, constraints, ["a", "b", "c"])
    assert out["passing"] == []
    assert [b["constraint"] for b in out["binding"]] == ["recall>=0.9", "qps>=50000"]
    assert out["binding"][0]["best_value_among_them"] == 0.85 and out["binding"][1]["best_value_among_them"] == 1000
    none_alone = select(points, [parse_constraint("recall>=0.99"), parse_constraint("qps>=1e6")], ["a", "b", "c"])
    assert none_alone["binding"] == [] and {c["label"] for c in none_alone["closest"]} == {"a", "b", "c"}
    unmeasured = select([{**points[0], "qps_batch": None}], [parse_constraint("qps>=1")], ["a"])
    assert unmeasured["binding"][0]["best_value_among_them"] is None


@pytest.mark.parametrize("text, message", [
    ("recal>=0.9", "unknown name 'recal'"), ("recall=>0.9", "expected NAME OP NUMBER"),
    ("recall>=abc", "'abc' is not a number"), ("recall>=nan", "finite"), ("R0>=0.5", "δ must be a number in (0, 1]"),
    ("__import__('os').system('x')", "expected NAME OP NUMBER"), ("recall>=0.9;qps>1", "expected NAME OP NUMBER"),
])
def test_bad_constraints_are_one_line(text, message):
    with pytest.raises(Exception) as err:
        parse_constraint(text)
    assert message in str(err.value)


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sel")
    rng = np.random.default_rng(4)
    np.save(folder / "b.npy", rng.standard_normal((1200, 8)).astype(np.float32))
    np.save(folder / "q.npy", rng.standard_normal((60, 8)).astype(np.float32))
    return folder


def _args(folder):
    return ["robustness", "--base-vectors", str(folder / "b.npy"), "--query-vectors", str(folder / "q.npy"), "--k", "10",
            "--index-spec", "ivf:nlist=32,nprobe=1|2|4|8|32", "--delta", "0.5", "--latency-queries", "5",
            "--qps-repeats", "1", "--bootstrap", "100"]


def test_cli_require_and_min_recall(npy, tmp_path):
    done = runner.invoke(app, [*_args(npy), "--require", "recall>=0.9", "--require", "R0.3>=0.95", "--min-recall", "0.6",
                               "--out", str(tmp_path / "r.json"), "--per-query", str(tmp_path / "pq.jsonl")])
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["meta"]["deltas"] == [0.3, 0.5]  # R0.3 added the δ it needs
    assert all(p["recall_mean"] >= 0.6 for p in result["points"])
    assert all(d["recall_mean"] < 0.6 for d in result["meta"]["min_recall"]["dropped_points"])
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    for i, point in enumerate(result["points"]):  # per-query rows renumbered with the kept points
        assert np.mean([r["recall"] for r in rows if r["point"] == i]) == pytest.approx(point["recall_mean"])
    passing = [i for i, p in enumerate(result["points"]) if p["recall_mean"] >= 0.9 and p["robustness"]["0.3"] >= 0.95]
    assert [row["point"] for row in result["selection"]["passing"]] == passing
    assert "operating point(s) meet recall>=0.9 and R0.3>=0.95" in done.output
    none = runner.invoke(app, [*_args(npy), "--require", "recall>=0.9", "--require", "qps>=1e12"])
    assert none.exit_code == 0 and "binding: 'qps>=1e12'" in none.output


def test_cli_bad_require_is_one_error_line(npy):
    done = runner.invoke(app, [*_args(npy), "--require", "speed>=3"])
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [("ragdiag: error: --require 'speed>=3': unknown name 'speed' (expected one "
                                                "of recall, qps, p50, p95, p99, zero, build_s, mib, R<δ>)")]
    assert runner.invoke(app, [*_args(npy), "--min-recall", "1.5"]).exit_code == 2
