"""Standard metrics come from ir_measures (equal to a direct call) and agree with ranx; the
count-matrix bootstrap equals a plain index-resampling loop with the same draws; the real MS MARCO
graded sample (skipped when ../shared is absent)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from ragdiag.evaluate import bootstrap
from ragdiag.measures.standard import standard_values

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "msmarco-passage-sample"
KS = (1, 5, 10, 20)
METRICS = ("ndcg", "recall", "mrr", "map", "precision")


def random_graded(n_queries: int, seed: int):
    rng = random.Random(seed)
    qrels, ranking = {}, {}
    for q in range(n_queries):
        pool = {f"d{i}": rng.randint(1, 5) for i in range(rng.randint(1, 25))}
        if q % 7 == 0:  # some queries without any grade >= 4
            pool = {d: min(g, 3) for d, g in pool.items()}
        docs = list(pool) + [f"u{i}" for i in range(rng.randint(0, 15))]
        rng.shuffle(docs)
        qrels[f"q{q}"], ranking[f"q{q}"] = pool, docs[: rng.randint(1, len(docs))]
    return qrels, ranking


def test_standard_metrics_are_ir_measures_values():
    import ir_measures

    qrels, ranking = random_graded(400, seed=1)
    ids = list(qrels)
    got = standard_values(ranking, qrels, ids, METRICS, KS, gold=4)
    shifted = {q: {d: g - 1 for d, g in docs.items()} for q, docs in qrels.items()}
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranking.items()}
    names = {"ndcg": "nDCG@{k}", "recall": "R(rel=3)@{k}", "mrr": "RR(rel=3)@{k}", "map": "AP(rel=3)@{k}", "precision": "P(rel=3)@{k}"}
    for m in METRICS:
        for k in KS:
            measure = ir_measures.parse_measure(names[m].format(k=k))
            direct = {r.query_id: r.value for r in ir_measures.iter_calc([measure], shifted, run)}
            assert np.array_equal(got[(m, k)], np.array([direct[q] for q in ids])), (m, k)


@pytest.mark.slow
def test_standard_metrics_agree_with_ranx():
    ranx = pytest.importorskip("ranx")
    qrels, ranking = random_graded(300, seed=2)
    # ranx needs at least one relevant document per query for its binary measures: keep those queries
    ids = [q for q, docs in qrels.items() if any(g >= 4 for g in docs.values())]
    got = standard_values(ranking, qrels, ids, METRICS, KS, gold=4)
    shifted = {q: {d: g - 1 for d, g in qrels[q].items()} for q in ids}
    run = {q: {d: float(len(ranking[q]) - i) for i, d in enumerate(ranking[q])} for q in ids}
    names = {"ndcg": "ndcg@{k}", "recall": "recall@{k}-l3", "mrr": "mrr@{k}-l3", "map": "map@{k}-l3", "precision": "precision@{k}-l3"}
    wanted = [names[m].format(k=k) for m in METRICS for k in KS]
    # Plain dicts, as ranx.evaluate documents them: ranx turns them into its typed lists and runs the same
    # (disk-cached) metric kernels as for Qrels/Run, whose typed dicts would first JIT-compile numba's
    # dictionary methods, which numba cannot cache (~5 s of CPU in every process). Per-query scores come
    # back in the dicts' order, which is ``ids`` for both.
    assert list(shifted) == list(run) == ids
    scores = ranx.evaluate(shifted, run, wanted, return_mean=False)
    for m in METRICS:
        for k in KS:
            theirs = dict(zip(ids, scores[names[m].format(k=k)]))
            np.testing.assert_allclose(got[(m, k)], [theirs[q] for q in ids], rtol=0, atol=1e-12, err_msg=f"{m}@{k}")


def test_bootstrap_equals_index_resampling():
    rng = np.random.default_rng(5)
    values = rng.random((137, 4))
    values[rng.random((137, 4)) < 0.2] = np.nan  # undefined queries
    got = bootstrap.bootstrap_means(values, 300, seed=11, batch=64)
    draw_rng = np.random.default_rng(11)
    want = np.empty_like(got)
    row = 0
    for start in range(0, 300, 64):
        size = min(64, 300 - start)
        draws = draw_rng.integers(0, 137, size=(size, 137))
        for b in range(size):
            sample = values[draws[b]]
            want[row] = [np.nanmean(sample[:, j]) for j in range(4)]
            row += 1
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_paired_bootstrap_of_identical_runs_is_zero_and_summaries_hold_the_mean():
    a = np.linspace(0, 1, 50)
    summary = bootstrap.summarise(np.stack([a, a - a], axis=1), 200, seed=0)
    assert summary[0].value == pytest.approx(0.5) and summary[0].ci[0] < 0.5 < summary[0].ci[1]
    assert summary[1].value == 0.0 and summary[1].ci == (0.0, 0.0)
    assert bootstrap.summarise(np.full((5, 1), np.nan), 10, seed=0)[0] == bootstrap.Summary(None, None, 0)


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/data/msmarco-passage-sample (not in a plain clone)")
def test_real_msmarco_graded_sample(tmp_path):
    from ragdiag.evaluate.evaluation import EvaluateParams, evaluate_files

    qrels = SHARED / "qrels" / "graded_thesis.tsv"
    run = tmp_path / "thesis_bm25.trec"
    lines = (SHARED / "candidates.tsv").read_text().splitlines()[1:]
    run.write_text("".join(f"{c[0]} Q0 {c[1]} {c[2]} {100 - int(c[2])} bm25\n" for c in (line.split("\t") for line in lines)))
    evaluated, rows = evaluate_files(qrels, [run], EvaluateParams(ks=(10, 20), pool_depth=20, bootstrap=100))
    result = evaluated.to_json()
    assert result["meta"]["n_queries"] == 42
    by = {(m["metric"], m["k"]): m for m in result["runs"][0]["metrics"]}
    # the thesis pools are exactly the BM25 top-20: at K = 20 every judged passage is retrieved
    assert by[("ra_nwg", 20)]["value"] == pytest.approx(1.0) and by[("proc", 10)]["value"] == pytest.approx(1.0)
    assert by[("unjudged", 20)]["value"] == 0.0
    # seven queries have no grade 5, one has neither 4 nor 5 (SOURCE.md)
    assert by[("nrecall5", 10)]["n_defined"] == 35 and by[("nrecall4", 10)]["n_defined"] == 41
    assert 0 < by[("ra_nwg", 10)]["value"] < 1
