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
from typing import Any

import numpy as np
import numpy.typing as npt

from ragdiag.extras import require
from ragdiag.measures import dcg

FloatArray = npt.NDArray[np.float64]


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
    return {q: dict(zip(ids, map(float, range(len(ids), 0, -1)))) for q, ids in ranking.items()}


# trec_eval measure families (the names ir_measures' pytrec_eval provider uses); reported as "<family>_<k>"
TREC_EVAL_FAMILY = {"recall": "recall", "map": "map_cut", "precision": "P"}


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


class StandardScorer:
    """The standard metrics of one qrels, for any number of runs.

    The values are those of ir_measures' ``measure_name`` measures, computed by the code ir_measures
    dispatches them to: pytrec_eval (trec_eval), one evaluator built once from the qrels and called
    once per run for every measure and cut-off, at ``relevance_level = gold − 1``; nDCG@K (whose gains
    do not depend on it) by :func:`ndcg_values`, trec_eval's ``ndcg_cut`` bit for bit. ``RR(rel)@K``, which ir_measures routes to its pure-Python MS MARCO provider,
    is trec_eval's ``recip_rank`` = 1 / rank of the first relevant passage when that rank is ≤ K,
    else 0 — the definition of RR@K.
    """

    def __init__(self, qrels: Mapping[str, Mapping[str, int]], query_ids: Sequence[str], metrics: Sequence[str],
                 ks: Sequence[int], gold: int) -> None:
        self.query_ids, self.metrics, self.ks = list(query_ids), list(metrics), list(ks)
        self.qrels = qrels
        self.evaluator: Any = None
        if not any(m != "ndcg" for m in self.metrics):
            return
        pytrec_eval = require("pytrec_eval")  # the eval extra (pytrec-eval-terrier, ir_measures' trec_eval engine)

        cutoffs = ",".join(str(k) for k in sorted(set(ks)))
        measures = {f"{TREC_EVAL_FAMILY[m]}.{cutoffs}" for m in metrics if m in TREC_EVAL_FAMILY}
        if "mrr" in metrics:
            measures.add("recip_rank")
        judged = shifted_qrels({q: qrels[q] for q in query_ids})
        self.evaluator = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=gold - 1)

    def values(self, ranking: Mapping[str, Sequence[str]]) -> dict[tuple[str, int], FloatArray]:
        """(metric, k) → per-query values aligned with the query ids (NaN where trec_eval gave none)."""
        ndcg = ndcg_values(ranking, self.qrels, self.query_ids, self.ks) if "ndcg" in self.metrics else None
        per_query = {} if self.evaluator is None else \
            self.evaluator.evaluate(rank_scores({q: ranking[q] for q in self.query_ids}))
        rows = [per_query.get(q) for q in self.query_ids]
        out: dict[tuple[str, int], FloatArray] = {}
        for metric in self.metrics:
            for k in self.ks:
                if ndcg is not None and metric == "ndcg":
                    out[(metric, k)] = ndcg[self.ks.index(k)]
                    continue
                name = "recip_rank" if metric == "mrr" else f"{TREC_EVAL_FAMILY[metric]}_{k}"
                column = np.array([np.nan if row is None else row[name] for row in rows], dtype=np.float64)
                if metric == "mrr":  # the first relevant passage counts only within the top K
                    with np.errstate(divide="ignore", invalid="ignore"):
                        beyond = np.rint(1.0 / column) > k
                    column = np.where(beyond, 0.0, column)
                out[(metric, k)] = column
        return out


def standard_values(ranking: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                    query_ids: Sequence[str], metrics: Sequence[str], ks: Sequence[int], gold: int) -> dict[tuple[str, int], FloatArray]:
    """(metric, k) → per-query values of one run aligned with ``query_ids`` (see :class:`StandardScorer`);
    ``ranking`` maps a query to its ranked doc ids, ``qrels`` holds grades 1–5."""
    return StandardScorer(qrels, query_ids, metrics, ks, gold).values(ranking)
