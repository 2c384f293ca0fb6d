"""Standard IR metrics: the ``ir_measures`` measures (MacAvaney et al., ECIR 2022). Recall, RR, AP and P
are computed by pytrec_eval (Van Gysel & de Rijke, SIGIR 2018) — the trec_eval code ir_measures
dispatches them to — in one call per run, without ir_measures' per-query Python ``Metric`` objects
(most of its cost on 10,000 queries). nDCG@K is ragdiag's one DCG (:mod:`ragdiag.measures.dcg`), which
performs trec_eval's ``ndcg_cut`` operations in its order: the same bits (tests/measures/test_one_ndcg.py).

Graded labels (1–5) are passed as gain g − 1, so "not relevant" (1) gains 0 and
nDCG@K uses gains 0–4 (Järvelin & Kekäläinen 2002, linear gain as in trec_eval). The binary
measures count a passage as relevant when its grade is ≥ gold, i.e. ``rel = gold − 1`` on the
shifted labels. Ties: ragdiag ranks by the run's list order, so pytrec_eval receives the score
``depth − rank`` (strictly decreasing) and a score tie in the run keeps the run's order instead of
trec_eval's doc-id tie-break.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragdiag.measures import dcg
from ragdiag.measures.scoring import JudgedRun, MeasureScorer, MeasureSettings, measures_named, per_k
from ragdiag.measures.trec_eval import rank_scores, shifted_qrels

__all__ = ["gain_mapping", "ndcg_values", "rank_scores", "shifted_qrels", "standard_values"]

FloatArray = npt.NDArray[np.float64]


def gain_mapping(gold: int) -> dict[str, str]:
    """The label conventions printed with every result."""
    return {
        "graded_gain": "grade g -> gain g - 1 (1 -> 0 ... 5 -> 4), linear (trec_eval nDCG)",
        "binary_relevance": f"relevant = grade >= {gold} (ir_measures rel={gold - 1} on the shifted labels)",
        "ties": "run list order; ir_measures gets score = depth - rank, so score ties keep the run's order",
        "no_relevant": f"recall, mrr, map, precision score 0 on a query with no grade >= {gold} passage (trec_eval convention)",
    }


def ndcg_values(ranking: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                query_ids: Sequence[str], ks: Sequence[int]) -> FloatArray:
    """nDCG@k per (k, query): row i holds ``ks[i]``, columns align with ``query_ids``. Gain = grade − 1 (unjudged 0), ideal = the judged
    gains sorted, as trec_eval's ``ndcg_cut``; NaN for a query without judgements (trec_eval skips it).
    The run is ordered as trec_eval orders :func:`rank_scores` (a repeated id keeps its last rank)."""
    width = max(ks, default=0)
    gains = np.zeros((len(query_ids), width))
    ideal = np.zeros((len(query_ids), width))
    judged = np.ones(len(query_ids), dtype=bool)
    for row, q in enumerate(query_ids):
        grades = qrels.get(q) or {}
        judged[row] = bool(grades)
        scores = rank_scores({q: ranking.get(q, ())})[q]
        ranked = sorted(scores, key=scores.__getitem__, reverse=True)[:width]
        gains[row, :len(ranked)] = [int(grades.get(d, 1)) - 1 for d in ranked]
        best = sorted((int(g) - 1 for g in grades.values()), reverse=True)[:width]
        ideal[row, :len(best)] = best
    ideal_columns = dcg.dcg_columns(ideal) if width else ideal
    out: FloatArray = np.full((len(ks), len(query_ids)), np.nan)
    for row, k in enumerate(ks):
        values = dcg.ndcg(gains, np.full(len(query_ids), k), ideal_columns[:, k - 1])
        out[row] = np.where(judged, values, np.nan)
    return out


def _scored_when_unranked(run: JudgedRun, table: FloatArray) -> FloatArray:
    """pytrec_eval omits a query with an empty ranking: it scores 0 (trec_eval's convention)."""
    out: FloatArray = np.where(run.unranked()[None, :] & np.isnan(table), 0.0, table)
    return out


def _cut(run: JudgedRun, family: str, ks: Sequence[int]) -> FloatArray:
    """trec_eval's ``<family>_<k>`` per cut-off."""
    return _scored_when_unranked(run, per_k(ks, len(run.query_ids), lambda k: run.trec_eval[f"{family}_{k}"]))


def ndcg(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """nDCG@K, gain = grade − 1 (:func:`ndcg_values`)."""
    ids, qrels = run.ranking()
    return _scored_when_unranked(run, ndcg_values(ids, qrels, run.query_ids, ks))


def recall(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """R(rel=gold−1)@K: trec_eval's ``recall_K``."""
    return _cut(run, "recall", ks)


def average_precision(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """AP(rel=gold−1)@K: trec_eval's ``map_cut_K``."""
    return _cut(run, "map_cut", ks)


def precision(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """P(rel=gold−1)@K: trec_eval's ``P_K``."""
    return _cut(run, "P", ks)


def mrr(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """RR(rel=gold−1)@K: trec_eval's ``recip_rank`` = 1 / rank of the first relevant passage when that rank is
    ≤ K, else 0 — the definition of RR@K (ir_measures routes it to its pure-Python MS MARCO provider)."""
    column = run.trec_eval["recip_rank"]
    with np.errstate(divide="ignore", invalid="ignore"):
        rank = np.rint(1.0 / column)
    return _scored_when_unranked(run, per_k(ks, len(column), lambda k: np.where(rank > k, 0.0, column)))


@dataclass(frozen=True)
class _Gold:
    """The settings :func:`standard_values` passes: only the gold grade matters to the standard measures."""

    gold: int
    pool_depth: int = 0
    harm_max: int = 0
    weights: Any = None


def standard_values(ranking: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                    query_ids: Sequence[str], metrics: Sequence[str], ks: Sequence[int], gold: int) -> dict[tuple[str, int], FloatArray]:
    """(metric, k) → per-query values of one run aligned with ``query_ids``, through the registry's
    implementations; ``ranking`` maps a query to its ranked doc ids, ``qrels`` holds grades 1–5."""
    scorer = MeasureScorer(measures_named(metrics), query_ids, ks, _Gold(gold), qrels)
    return scorer.values(scorer.run(ids=ranking))
