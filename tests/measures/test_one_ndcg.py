"""One nDCG: only :mod:`ragdiag.measures.dcg` computes a discounted gain, and every command's nDCG is it —
correlate's (0/1 gains, ideal = the n retrieved positives) against the paper's loop, evaluate's (graded
gains) bit for bit against trec_eval (pytrec_eval, what ir_measures dispatches ``nDCG@K`` to),
robustness's (ideal = K ones) against ir_measures."""

from __future__ import annotations

import ast
import math
import random
from pathlib import Path

import numpy as np
import pytest

from ragdiag.measures import dcg, sample
from ragdiag.measures.standard import ndcg_values, shifted_qrels
from tests.architecture.source_trees import nodes
from tests.metrics.reference import _ndcg as paper_loop

PACKAGE = Path(__file__).resolve().parents[2] / "ragdiag"


def test_only_measures_dcg_computes_a_discounted_gain():
    """No module but measures/dcg.py calls log2 (the DCG discount) or defines a function named *dcg*."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "measures" / "dcg.py":
            continue
        for node in nodes(path):
            if isinstance(node, ast.Attribute) and node.attr == "log2" or isinstance(node, ast.Name) and node.id == "log2":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} log2")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "dcg" in node.name.lower() \
                    and path.parent != PACKAGE / "measures":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} def {node.name}")
    assert found == [], "a second DCG outside ragdiag/measures/dcg.py:\n" + "\n".join(found)


def test_correlate_ndcg_is_the_paper_loop_bit_for_bit():
    rng = np.random.default_rng(3)
    in_k = (rng.random((3000, 12)) < 0.3).astype(np.uint8)
    k = rng.integers(1, 13, len(in_k))
    in_k[np.arange(12)[None, :] >= k[:, None]] = 0
    got = sample.ndcg(in_k, k, in_k.sum(axis=1))
    want = np.array([paper_loop(list(row[:kk])) for row, kk in zip(in_k, k)])
    assert got.tobytes() == want.tobytes()


def _graded(n_queries: int, seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    rng = random.Random(seed)
    qrels, ranking = {}, {}
    for q in range(n_queries):
        pool = {f"d{i}": rng.randint(1, 5) for i in range(rng.randint(0 if q % 11 == 0 else 1, 25))}
        docs = list(pool) + [f"u{i}" for i in range(rng.randint(0, 15))]
        rng.shuffle(docs)
        ranked = docs[: rng.randint(0, len(docs))]
        if q % 13 == 0 and ranked:  # a repeated id: trec_eval keeps its last score
            ranked.insert(rng.randint(0, len(ranked)), ranked[-1])
        qrels[f"q{q}"], ranking[f"q{q}"] = pool, ranked
    return qrels, ranking


def test_evaluate_ndcg_is_trec_eval_bit_for_bit():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ragdiag.measures.standard import rank_scores

    qrels, ranking = _graded(1500, seed=4)
    ids, ks = list(qrels), (1, 2, 3, 5, 10, 20, 50)
    got = ndcg_values(ranking, qrels, ids, ks)
    cut = ",".join(map(str, ks))
    theirs = pytrec_eval.RelevanceEvaluator(shifted_qrels(qrels), {f"ndcg_cut.{cut}"}).evaluate(rank_scores(ranking))
    for row, k in enumerate(ks):
        want = np.array([theirs[q][f"ndcg_cut_{k}"] if q in theirs else np.nan for q in ids])
        assert got[row].tobytes() == want.tobytes(), k
    unjudged = [row for row, q in enumerate(ids) if not qrels[q]]
    assert unjudged and np.isnan(got[:, unjudged]).all()  # no judgements: trec_eval gives no value
    assert any(len(set(r)) < len(r) for r in ranking.values()) and any(not r for r in ranking.values())


def test_robustness_ndcg_agrees_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    from ragdiag.bench.matched_recall import ranking_metrics

    rng = np.random.default_rng(5)
    k = 10
    true_ids = np.array([rng.choice(100, k, replace=False) for _ in range(300)])
    ids = np.array([rng.choice(np.r_[t[:6], rng.choice(np.arange(100, 130), 8, replace=False)], k, replace=False)
                    for t in true_ids])
    ids[7, -3:] = -1  # a short list (faiss pads the end with -1)
    got = ranking_metrics(ids, true_ids)["ndcg"]
    qrels = {str(q): {str(d): 1 for d in t} for q, t in enumerate(true_ids)}
    run = {str(q): {str(d): float(k - r) for r, d in enumerate(row) if d >= 0} for q, row in enumerate(ids)}
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ k], qrels, run)}
    np.testing.assert_allclose(got, [theirs.get(str(q), 0.0) for q in range(300)], rtol=0, atol=1e-13)


def test_dcg_hand_checked():
    gains = np.array([[3.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    assert dcg.dcg(gains, [3, 2]).tolist() == [3.0 + 1 / math.log2(4), 0.0]
    assert dcg.dcg(gains, [0, 3]).tolist() == [0.0, 0.0]
    assert dcg.ones_ideal([0, 1, 2], 3).tolist() == [0.0, 1.0, 1 + 1 / math.log2(3)]
    assert dcg.ndcg(gains, [1, 1], [3.0, 0.0]).tolist() == [1.0, 0.0]
