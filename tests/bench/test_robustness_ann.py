"""Robustness-δ@K of vector indexes: ground truth, recall, robustness, per-query rows, CLI errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.bench.recall import (
    ann_recall,
    exact_ground_truth,
    recall_histogram,
    robustness,
)
from ragdiag.cli import app
from ragdiag.retrieval.indexes import prepare_vectors

runner = CliRunner()


def _clustered(rng, n, dim=16, centers=12):
    c = rng.standard_normal((centers, dim))
    return (c[rng.integers(0, centers, n)] + 0.4 * rng.standard_normal((n, dim))).astype(np.float32)


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    rng = np.random.default_rng(3)
    folder = tmp_path_factory.mktemp("vec")
    np.save(folder / "base.npy", _clustered(rng, 3000))
    np.save(folder / "queries.npy", _clustered(rng, 120))
    return folder


@pytest.mark.parametrize("metric", ["ip", "cosine", "l2"])
def test_exact_ground_truth_equals_brute_force(npy, metric):
    base = prepare_vectors(np.load(npy / "base.npy"), metric, "b")
    queries = prepare_vectors(np.load(npy / "queries.npy"), metric, "q")
    _, ids = exact_ground_truth(base, queries, 10, metric)
    base64_, q64 = base.astype(np.float64), queries.astype(np.float64)
    dist = ((q64[:, None, :] - base64_[None]) ** 2).sum(-1) if metric == "l2" else -(q64 @ base64_.T)
    brute = np.argsort(dist, axis=1, kind="stable")[:, :10]
    # same sets (order of float near-ties may differ between float32 faiss and float64 numpy)
    overlap = np.mean([len(set(a) & set(b)) for a, b in zip(ids, brute)])
    assert overlap >= 9.99


def test_robustness_and_histogram_hand_case():
    recalls = np.array([0.0, 0.3, 0.5, 1.0])
    assert robustness(recalls) == {"0.1": 0.75, "0.3": 0.75, "0.5": 0.5, "0.7": 0.25, "0.9": 0.25}
    hist = recall_histogram(np.array([0.0, 0.0, 0.1, 1.0, 0.9]), 10)
    assert hist["bins"][:2] == [0.0, 0.1] and hist["counts"] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1]


def test_tie_aware_recall_counts_equidistant_items():
    true_ids, ids = np.array([[0, 1]]), np.array([[0, 2]])
    true_scores, returned = np.array([[0.9, 0.5]]), np.array([[0.9, 0.5]])  # item 2 ties the 2nd true item
    assert ann_recall(ids, true_ids)[0] == 0.5
    tied = ann_recall(ids, true_ids, tie_aware=True, returned_scores=returned, true_scores=true_scores, metric="ip")
    assert tied[0] == 1.0
    worse = ann_recall(ids, true_ids, tie_aware=True, returned_scores=np.array([[0.9, 0.4]]), true_scores=true_scores)
    assert worse[0] == 0.5


def test_cli_sweep_per_query_rows_reproduce_points(npy, tmp_path):
    out, per_query, plots = tmp_path / "r.json", tmp_path / "pq.jsonl", tmp_path / "plots"
    args = ["robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"), "--k", "10",
            "--metric", "l2", "--index-spec", "flat", "--index-spec", "hnsw:M=4,efConstruction=16,efSearch=4|32",
            "--index-spec", "ivf:nlist=32,nprobe=1|8", "--delta", "0.1,0.5,0.9", "--format", "json",
            "--out", str(out), "--per-query", str(per_query), "--plot-dir", str(plots),
            "--latency-queries", "50", "--qps-repeats", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert json.loads(result.stdout) == data
    assert data["meta"]["k"] == 10 and data["meta"]["recall"] == "plain" and data["meta"]["base_sha256"]
    points = data["points"]
    assert [p["index"] for p in points] == ["flat", "hnsw", "hnsw", "ivf", "ivf"]
    assert points[0]["recall_mean"] == 1.0 and set(points[0]["robustness"].values()) == {1.0}
    assert points[3]["recall_mean"] < points[4]["recall_mean"]  # nprobe 1 misses neighbours that 8 finds
    for key in ("qps_batch", "latency_ms", "build_s", "index_bytes", "threads", "params", "zero_recall_queries"):
        assert key in points[1]
    assert set(points[1]["latency_ms"]) >= {"p50", "p95", "p99"} and points[1]["params"]["efSearch"] == 4
    rows = [json.loads(line) for line in per_query.read_text().splitlines()]
    assert len(rows) == 5 * 120
    for i, point in enumerate(points):
        recalls = np.array([r["recall"] for r in rows if r["point"] == i])
        assert recalls.mean() == pytest.approx(point["recall_mean"], abs=1e-12)
        assert int((recalls == 0).sum()) == point["zero_recall_queries"]
        for delta, fraction in point["robustness"].items():
            assert np.mean(recalls >= float(delta)) == pytest.approx(fraction, abs=1e-12)
        assert sum(point["recall_histogram"]["counts"]) == 120
    assert all(len(r["ids"]) == 10 for r in rows)
    assert sorted(p.name for p in plots.iterdir()) == [
        "qps_vs_robustness.png", "recall_distribution.png", "robustness_vs_recall.png"]


def test_cli_table_tie_aware_label_and_threads(npy, tmp_path):
    import faiss

    before = faiss.omp_get_max_threads()
    try:
        result = runner.invoke(app, ["robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
                                     "--index-spec", "flat", "--tie-aware", "--latency-queries", "5", "--qps-repeats", "1",
                                     "--threads", "1", "--out", str(tmp_path / "r.json")])
    finally:
        faiss.omp_set_num_threads(before)
    assert result.exit_code == 0, result.output
    assert "Robustness-δ@10" in result.stdout and "tie-aware" in result.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["points"][0]["threads"] == 1 and data["meta"]["recall"].startswith("tie-aware")
    assert data["points"][0]["recall_mean"] == 1.0


@pytest.mark.parametrize(
    "make,extra,message",
    [
        (lambda r: (r.standard_normal((50, 8)), r.standard_normal((5, 6))), [], "dimension mismatch"),
        (lambda r: (r.standard_normal((5, 8)), r.standard_normal((5, 8))), [], "k=10 is larger than the base"),
        (lambda r: (r.standard_normal((50, 8)), r.standard_normal((5, 8))), ["--index-spec", "hnsw:efSearch=x"], "not an integer"),
        (lambda r: (np.full((50, 8), np.nan), r.standard_normal((5, 8))), [], "NaN"),
        (lambda r: (np.zeros((0, 8)), r.standard_normal((5, 8))), [], "no vectors"),
        (lambda r: (r.standard_normal((50, 8)), r.standard_normal((5, 8))), ["--delta", "0,2"], "--delta"),
        (lambda r: (r.standard_normal((50, 8)), r.standard_normal((5, 8))), ["--metric", "dot"], "--metric: 'dot' is not one of"),
    ],
)
def test_cli_bad_input_is_one_clear_line(tmp_path, make, extra, message):
    base, queries = make(np.random.default_rng(0))
    np.save(tmp_path / "b.npy", base.astype(np.float32))
    np.save(tmp_path / "q.npy", queries.astype(np.float32))
    result = runner.invoke(app, ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors", str(tmp_path / "q.npy"), *extra])
    assert result.exit_code != 0
    assert message in result.stderr and result.stderr.startswith("ragdiag: error:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_missing_inputs_and_missing_file(tmp_path):
    result = runner.invoke(app, ["robustness"])
    assert result.exit_code != 0 and "no input: give base and query vectors" in result.stderr
    result = runner.invoke(app, ["robustness", "--base-vectors", str(tmp_path / "nope.npy"), "--query-vectors", str(tmp_path / "q.npy")])
    assert result.exit_code != 0 and "file not found" in result.stderr
