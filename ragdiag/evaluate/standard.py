"""Standard IR metrics through ``ir_measures`` (MacAvaney et al., ECIR 2022), never re-implemented.

Graded labels (1–5) are passed to ir_measures as gain g − 1, so "not relevant" (1) gains 0 and
nDCG@K uses gains 0–4 (Järvelin & Kekäläinen 2002, linear gain as in trec_eval). The binary
measures count a passage as relevant when its grade is ≥ gold, i.e. ``rel = gold − 1`` on the
shifted labels. Ties: ragdiag ranks by the run's list order, so ir_measures receives the score
``depth − rank`` (strictly decreasing) and a score tie in the run keeps the run's order instead of
trec_eval's doc-id tie-break.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ragdiag.extras import require

STANDARD_METRICS = ("ndcg", "recall", "mrr", "map", "precision")


def measure_name(metric: str, k: int, gold: int) -> str:
    """The ir_measures measure string of a ragdiag metric name at cut-off ``k``."""
    rel = gold - 1
    return {
        "ndcg": f"nDCG@{k}",
        "recall": f"R(rel={rel})@{k}",
        "mrr": f"RR(rel={rel})@{k}",
        "map": f"AP(rel={rel})@{k}",
        "precision": f"P(rel={rel})@{k}",
    }[metric]


def gain_mapping(gold: int) -> dict[str, str]:
    """The label conventions printed with every result."""
    return {
        "graded_gain": "grade g -> gain g - 1 (1 -> 0 ... 5 -> 4), linear (trec_eval nDCG)",
        "binary_relevance": f"relevant = grade >= {gold} (ir_measures rel={gold - 1} on the shifted labels)",
        "ties": "run list order; ir_measures gets score = depth - rank, so score ties keep the run's order",
        "no_relevant": f"recall, mrr, map, precision score 0 on a query with no grade >= {gold} passage (trec_eval convention)",
    }


def shifted_qrels(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Qrels with each grade g replaced by the gain g − 1."""
    return {q: {d: int(g) - 1 for d, g in docs.items()} for q, docs in qrels.items()}


def rank_scores(ranking: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """query → {doc: depth − rank}: strictly decreasing scores that reproduce the list order."""
    return {q: {d: float(len(ids) - i) for i, d in enumerate(ids)} for q, ids in ranking.items()}


def standard_values(ranking: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                    query_ids: Sequence[str], metrics: Sequence[str], ks: Sequence[int], gold: int) -> dict[tuple[str, int], np.ndarray]:
    """(metric, k) → per-query values aligned with ``query_ids`` (NaN where ir_measures gave none).

    ``ranking`` maps a query to its ranked doc ids; ``qrels`` holds grades 1–5.
    """
    if not metrics:
        return {}
    ir_measures = require("ir_measures")
    names = {(m, k): measure_name(m, k, gold) for m in metrics for k in ks}
    parsed = {key: ir_measures.parse_measure(name) for key, name in names.items()}
    by_measure = {parsed[key]: key for key in parsed}
    # by object id (the object is kept alive in the value, so its id cannot be reused): a Measure
    # hashes through its repr, which dominates the cost on large runs
    column_of: dict[int, tuple[object, np.ndarray]] = {}
    position = {q: i for i, q in enumerate(query_ids)}
    out = {key: np.full(len(query_ids), np.nan) for key in names}
    run = rank_scores({q: ranking[q] for q in query_ids})
    judged = shifted_qrels({q: qrels[q] for q in query_ids})
    for metric in ir_measures.evaluator(list(parsed.values()), judged).iter_calc(run):
        cached = column_of.get(id(metric.measure))
        if cached is None:
            cached = column_of[id(metric.measure)] = (metric.measure, out[by_measure[metric.measure]])
        column = cached[1]
        row = position.get(metric.query_id)
        if row is not None:
            column[row] = metric.value
    return out
