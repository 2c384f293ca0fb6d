"""Query hardness: relative contrast and LID against numpy brute force, LID of uniform data, Spearman
with recall against scipy on the written JSON, zero-recall queries."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr
from typer.testing import CliRunner

from ragdiag.bench.hardness import features, lid_mle
from ragdiag.cli import app

runner = CliRunner()


def _brute(base, queries, k):
    dist = np.sqrt(((queries[:, None, :].astype(np.float64) - base[None].astype(np.float64)) ** 2).sum(-1))
    rc, lid = [], []
    for row in dist:
        positive = np.sort(row[row > 1e-6])
        rc.append(positive.mean() / positive[0])
        near = positive[:k]
        lid.append(-1.0 / np.mean(np.log(near / near[-1])))
    return np.array(rc), np.array(lid)


def test_features_equal_numpy_brute_force_and_skip_duplicates():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((700, 6)).astype(np.float32)
    queries = np.vstack([rng.standard_normal((30, 6)), base[:5]]).astype(np.float32)  # 5 queries are in the base
    got = features(base, queries, lid_k=10)
    rc, lid = _brute(base, queries, 10)
    assert np.allclose(got["relative_contrast"], rc, rtol=1e-4)
    assert np.allclose(got["lid"], lid, rtol=1e-3)


def test_lid_of_uniform_data_is_its_dimension():
    rng = np.random.default_rng(1)
    for dim in (2, 4):
        base = rng.random((20000, dim)).astype(np.float32)
        queries = (0.25 + 0.5 * rng.random((200, dim))).astype(np.float32)  # away from the cube's faces
        assert np.median(features(base, queries, lid_k=20)["lid"]) == pytest.approx(dim, rel=0.2)
    assert np.isnan(lid_mle(np.array([[1.0, 1.0, 1.0]]))[0])  # all at one distance: undefined, not a crash


def test_cli_hardness_correlations_and_zero_recall_queries(tmp_path):
    rng = np.random.default_rng(2)
    centers = rng.standard_normal((10, 12))
    base = (centers[rng.integers(0, 10, 2000)] + 0.5 * rng.standard_normal((2000, 12))).astype(np.float32)
    queries = (rng.standard_normal((80, 12)) * 1.2).astype(np.float32)
    np.save(tmp_path / "b.npy", base)
    np.save(tmp_path / "q.npy", queries)
    done = runner.invoke(app, ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors",
                               str(tmp_path / "q.npy"), "--k", "10", "--metric", "l2", "--index-spec",
                               "hnsw:M=4,efConstruction=8,efSearch=1|4|16", "--latency-queries", "2", "--qps-repeats", "1",
                               "--bootstrap", "100", "--hardness", "--lid-k", "15", "--out", str(tmp_path / "r.json"),
                               "--per-query", str(tmp_path / "pq.jsonl")])
    assert done.exit_code == 0, done.output
    assert "Query hardness vs recall (Spearman ρ)" in done.output
    hard = json.loads((tmp_path / "r.json").read_text())["hardness"]
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    rc, lid = _brute(base, queries, 15)
    assert np.allclose([q["relative_contrast"] for q in hard["queries"]], rc, rtol=1e-4)
    assert np.allclose([q["lid"] for q in hard["queries"]], lid, rtol=1e-3)
    for corr in hard["correlations"]:
        recall = np.array([r["recall"] for r in rows if r["point"] == corr["point"]])
        assert corr["relative_contrast"]["spearman"] == pytest.approx(spearmanr(rc, recall).statistic)
        assert corr["lid"]["spearman"] == pytest.approx(spearmanr(lid, recall).statistic, abs=1e-6)
    zero = {(r["query"]) for r in rows if r["recall"] == 0}
    assert {z["query"] for z in hard["zero_recall_queries"]} == zero and zero
    bad = runner.invoke(app, ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors",
                              str(tmp_path / "q.npy"), "--hardness", "--lid-k", "1"])
    assert bad.exit_code == 2 and "--lid-k" in bad.output
