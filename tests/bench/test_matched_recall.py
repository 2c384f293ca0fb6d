"""Metrics at matched recall: ranking metrics against ir_measures, interpolation against numpy.interp
on faiss indexes, no extrapolation, CLI output and plots."""

from __future__ import annotations

import json

import ir_measures
import numpy as np
import pytest
from ir_measures import AP, RR, Success, nDCG
from typer.testing import CliRunner

from ragdiag.bench.index_sweep import SweepOptions, run_sweep
from ragdiag.bench.matched_recall import bracket, matched_recall, ranking_metrics
from ragdiag.bench.recall import exact_ground_truth
from ragdiag.cli import app
from ragdiag.retrieval.index_specs import parse_index_spec

runner = CliRunner()


def _per_query(measure, qrels, run, n):
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    return np.array([got.get(str(q), 0.0) for q in range(n)])


def test_ranking_metrics_equal_ir_measures():
    rng = np.random.default_rng(0)
    n, k = 40, 10
    true_ids = np.array([rng.choice(200, k, replace=False) for _ in range(n)])
    ids = np.array([rng.choice(np.r_[t[:6], rng.choice(np.arange(200, 230), 8, replace=False)], k, replace=False)
                    for t in true_ids])
    ids[3, -2:] = -1  # a short list (faiss pads the end with -1)
    got = ranking_metrics(ids, true_ids)
    qrels_all = {str(q): {str(d): 1 for d in t} for q, t in enumerate(true_ids)}
    qrels_nn = {str(q): {str(t[0]): 1} for q, t in enumerate(true_ids)}
    run = {str(q): {str(d): float(k - r) for r, d in enumerate(row) if d >= 0} for q, row in enumerate(ids)}
    assert np.allclose(got["map"], _per_query(AP @ k, qrels_all, run, n))
    assert np.allclose(got["ndcg"], _per_query(nDCG @ k, qrels_all, run, n))
    assert np.allclose(got["mrr"], _per_query(RR @ k, qrels_nn, run, n))
    assert np.allclose(got["hit_rate"], _per_query(Success @ k, qrels_nn, run, n))


def test_bracket_never_extrapolates():
    assert bracket([0.2, 0.6, 0.9], 0.7) == (1, 2, pytest.approx(1 / 3))
    assert bracket([0.9, 0.2, 0.6], 0.2) == (1, 1, 0.0)
    assert bracket([0.2, 0.6], 0.6)[:2] in ((1, 1), (0, 1))
    assert bracket([0.2, 0.6], 0.61) is None and bracket([0.2, 0.6], 0.1) is None


@pytest.fixture(scope="module")
def measured():
    rng = np.random.default_rng(1)
    centers = rng.standard_normal((20, 16))
    base = (centers[rng.integers(0, 20, 3000)] + 0.6 * rng.standard_normal((3000, 16))).astype(np.float32)
    queries = (centers[rng.integers(0, 20, 150)] + 0.6 * rng.standard_normal((150, 16))).astype(np.float32)
    specs = [parse_index_spec("hnsw:M=4,efConstruction=16,efSearch=2|4|8|16|64"), parse_index_spec("ivf:nlist=32,nprobe=1|2|4|8")]
    opts = SweepOptions(k=10, metric="l2", deltas=(0.3, 0.9), latency_queries=5, repeats=1)
    points, recalls, ids = run_sweep(base, queries, specs, opts)
    _, true_ids = exact_ground_truth(base, queries, 10, "l2")
    return points, recalls, ids, true_ids


def test_interpolated_metrics_equal_numpy_interp(measured):
    points, recalls, ids, true_ids = measured
    target = 0.8
    out = matched_recall(points, recalls, ids, true_ids, (0.3, 0.9), target, 200, 0)
    families = {f["family"]: f for f in out["families"]}
    for spec in {p["spec"] for p in points}:
        members = [i for i, p in enumerate(points) if p["spec"] == spec]
        means = np.array([recalls[i].mean() for i in members])
        order = np.argsort(means)
        family = families[spec]
        if not means.min() <= target <= means.max():
            assert not family["in_range"] and "no extrapolation" in family["reason"]
            continue
        assert family["in_range"]

        def at_target(values, means=means, order=order):
            return np.interp(target, means[order], np.asarray(values)[order])

        assert family["recall_mean"] == pytest.approx(target)
        for name in ("map", "ndcg", "mrr", "hit_rate"):
            assert family[name] == pytest.approx(at_target([ranking_metrics(ids[i], true_ids)[name].mean() for i in members]))
        for q in (5, 10, 50):
            assert family[f"p{q}"] == pytest.approx(at_target([np.percentile(recalls[i], q) for i in members]))
        assert family["robustness"]["0.9"] == pytest.approx(at_target([np.mean(recalls[i] >= 0.9) for i in members]))
        assert family["robustness_curve"]["0.5"] == pytest.approx(at_target([np.mean(recalls[i] >= 0.5) for i in members]))
        low, high = family["robustness_ci"]["0.9"]
        assert low <= family["robustness"]["0.9"] <= high
    inside = [f for f in out["families"] if f["in_range"]]
    assert len(inside) == 2
    assert sum(f["deviation"]["ndcg"] for f in inside) == pytest.approx(0.0, abs=1e-12)
    assert inside[0]["deviation"]["p10"] == pytest.approx(inside[0]["p10"] - np.mean([f["p10"] for f in inside]))


def test_cli_match_recall_tables_plots_and_errors(tmp_path):
    rng = np.random.default_rng(2)
    np.save(tmp_path / "b.npy", rng.standard_normal((1500, 8)).astype(np.float32))
    np.save(tmp_path / "q.npy", rng.standard_normal((80, 8)).astype(np.float32))
    args = ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors", str(tmp_path / "q.npy"),
            "--k", "10", "--metric", "l2", "--index-spec", "flat", "--index-spec", "ivf:nlist=32,nprobe=1|2|4|8",
            "--index-spec", "hnsw:M=4,efConstruction=8,efSearch=1|2|4|16|64", "--latency-queries", "5",
            "--qps-repeats", "1", "--bootstrap", "200"]
    done = runner.invoke(app, [*args, "--match-recall", "0.85", "--out", str(tmp_path / "r.json"),
                               "--plot-dir", str(tmp_path / "plots")])
    assert done.exit_code == 0, done.output
    assert "At matched average recall@10 = 0.85" in done.output and "Deviation from the mean" in done.output
    result = json.loads((tmp_path / "r.json").read_text())
    flat = next(f for f in result["matched_recall"]["families"] if f["family"] == "flat")
    assert flat["in_range"] is False and flat["reason"].startswith("target recall 0.85 is outside the measured range")
    assert (tmp_path / "plots" / "matched_recall_deviation.png").stat().st_size > 10_000
    assert (tmp_path / "plots" / "robustness_vs_delta_matched.png").stat().st_size > 10_000
    for bad in ("0", "1.5", "nan"):
        failed = runner.invoke(app, [*args, "--match-recall", bad])
        assert failed.exit_code == 2 and "--match-recall" in failed.output
