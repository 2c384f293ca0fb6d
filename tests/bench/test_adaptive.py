"""Adaptive search: selection by the score gap, cost accounting and the equal-cost baseline, checked
against direct faiss searches and numpy."""

from __future__ import annotations

import json

import faiss
import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.bench.adaptive import (
    adaptive_study,
    parse_adaptive,
    per_query_search,
    score_gap,
)
from ragdiag.bench.recall import exact_ground_truth
from ragdiag.cli import app
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.indexes import build_index

runner = CliRunner()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((12, 16))
    base = (centers[rng.integers(0, 12, 3000)] + 0.6 * rng.standard_normal((3000, 16))).astype(np.float32)
    queries = (centers[rng.integers(0, 12, 120)] + 0.6 * rng.standard_normal((120, 16))).astype(np.float32)
    return base, queries


def _recall(ids, true_ids):
    return np.array([len(set(a) & set(b)) / len(b) for a, b in zip(ids, true_ids)])


@pytest.mark.parametrize("metric, spec_text", [("l2", "hnsw:M=4,efConstruction=16,efSearch=4|8|16|32"),
                                               ("ip", "ivf:nlist=32,nprobe=1|2|4|8")])
def test_adaptive_equals_direct_searches(data, metric, spec_text):
    base, queries = data
    spec = parse_index_spec(spec_text)
    param = "efSearch" if spec.kind == "hnsw" else "nprobe"
    index = build_index(spec, base, metric, seed=0)
    _, true_ids = exact_ground_truth(base, queries, 10, metric)
    low, high = spec.search[param][0], spec.search[param][-1]
    study = adaptive_study(index, spec, queries, true_ids, 10, metric, low, high, (0.5, 0.9), seed=1, repeats=1)

    def direct(value):  # a plain faiss batch search at one setting
        if param == "efSearch":
            index.hnsw.efSearch = value
        else:
            index.nprobe = value
        return index.search(queries, 10)

    (s1, i1), (_, i2) = direct(low), direct(high)
    gap = s1[:, -1] - s1[:, 0] if metric == "l2" else s1[:, 0] - s1[:, -1]
    for row in study["adaptive"]:
        n = round(row["share_researched"] * len(queries))
        chosen = np.zeros(len(queries), bool)
        chosen[np.argsort(gap, kind="stable")[:n]] = True
        if row["threshold"] is not None:
            assert (gap[chosen] <= row["threshold"]).all() and (gap[~chosen] >= row["threshold"]).all()
        recall = _recall(np.where(chosen[:, None], i2, i1), true_ids)
        assert row["recall_mean"] == pytest.approx(recall.mean())
        assert row["robustness"]["0.9"] == pytest.approx(np.mean(recall >= 0.9))
        fixed = study["fixed"]
        xs = np.array([f["ndis_mean"] for f in fixed])
        if xs.min() <= row["ndis_mean"] <= xs.max():
            order = np.argsort(xs)
            expected = np.interp(row["ndis_mean"], xs[order], np.array([f["robustness"]["0.5"] for f in fixed])[order])
            assert row["fixed_at_equal_ndis"]["robustness"]["0.5"] == pytest.approx(expected)
        else:
            assert row["fixed_at_equal_ndis"] is None
    first, last = study["adaptive"][0], study["adaptive"][-1]
    assert first["share_researched"] == 0 and first["recall_mean"] == pytest.approx(_recall(i1, true_ids).mean())
    assert last["share_researched"] == 1 and last["recall_mean"] == pytest.approx(_recall(i2, true_ids).mean())
    per_first = next(f for f in study["fixed"] if f[param] == low)["ndis_mean"]
    per_second = next(f for f in study["fixed"] if f[param] == high)["ndis_mean"]
    assert last["ndis_mean"] == pytest.approx(per_first + per_second)


def test_per_query_distance_counts_add_up_to_the_batch_counter(data):
    base, queries = data
    index = build_index(parse_index_spec("hnsw:M=8,efConstruction=20"), base, "l2")
    index.hnsw.efSearch = 16
    _, _, ndis = per_query_search(index, "hnsw", queries, 10)
    faiss.cvar.hnsw_stats.reset()
    index.search(queries, 10)
    assert ndis.sum() == faiss.cvar.hnsw_stats.ndis


def test_score_gap_and_parse():
    scores = np.array([[0.9, 0.5, 0.2]])
    assert score_gap(scores, "ip")[0] == pytest.approx(0.7) and score_gap(scores[:, ::-1], "l2")[0] == pytest.approx(0.7)
    assert parse_adaptive("16:128") == (16, 128)
    for bad in ("128:16", "16", "a:b", "0:4", "16:16"):
        with pytest.raises(RagdiagError, match="--adaptive"):
            parse_adaptive(bad)


def test_cli_adaptive_table_json_and_plot(tmp_path, data):
    base, queries = data
    np.save(tmp_path / "b.npy", base)
    np.save(tmp_path / "q.npy", queries[:60])
    args = ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors", str(tmp_path / "q.npy"),
            "--k", "10", "--index-spec", "ivf:nlist=32,nprobe=1|2|4", "--index-spec", "flat", "--latency-queries", "2",
            "--qps-repeats", "1", "--bootstrap", "100"]
    done = runner.invoke(app, [*args, "--adaptive", "1:4", "--out", str(tmp_path / "r.json"), "--plot-dir", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "Adaptive nprobe 1→4" in done.output
    studies = json.loads((tmp_path / "r.json").read_text())["adaptive"]
    assert len(studies) == 1 and [f["nprobe"] for f in studies[0]["fixed"]] == [1, 2, 4]
    assert (tmp_path / "adaptive_robustness.png").stat().st_size > 10_000
    bad = runner.invoke(app, [*args, "--adaptive", "4:1"])
    assert bad.exit_code == 2 and "--adaptive '4:1'" in bad.output
