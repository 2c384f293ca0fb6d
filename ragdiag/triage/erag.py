"""Utility labels from single-passage grades (eRAG: Salemi & Zamani, "Evaluating Retrieval Quality
in Retrieval-Augmented Generation", SIGIR 2024).

Each top-K passage d of query q is given alone to the generator; the grade u(q, d) ∈ [1, 5] of that
answer is d's utility for q, written as graded TREC qrels (``qid 0 docid u``, ``utility-qrels.tsv``).
Per query, eRAG's two aggregations over the top K:

- P@k (mean):   U_P(q) = (1/K) Σ_{d ∈ top K} u(q, d)
- success@k (max): U_S(q) = max_{d ∈ top K} u(q, d)

and the same two with the relevance qrels (rel(q, d) = 1 when the qrels grade is > 0, else 0):
R_P(q) = mean rel, R_S(q) = max rel. Each is compared with the end-to-end grade g(q) (the baseline
answer from the whole top K) by Kendall's τ-b across queries (``scipy.stats.kendalltau``): does
utility predict the answers better than relevance on this corpus?
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragdiag.results.triage import ERagSummary, KendallTau

AGGREGATIONS = ("p_at_k_mean", "success_at_k_max")


def utility_rows(utility: dict[str, dict[str, float]]) -> list[tuple[str, str, int]]:
    """(query, passage, utility grade rounded to an integer 1–5), in query then rank order."""
    return [(q, d, int(round(g))) for q, grades in utility.items() for d, g in grades.items()]


def trec_qrels(rows: list[tuple[str, str, int]]) -> str:
    """TREC qrels text ``qid 0 docid rel`` (read by ``evaluate --qrels``, ranx, ir_measures)."""
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


def aggregate(values: list[float]) -> dict[str, float | None]:
    """P@k as the mean and success@k as the max of per-passage values (None when there are none)."""
    if not values:
        return {"p_at_k_mean": None, "success_at_k_max": None}
    return {"p_at_k_mean": float(np.mean(values)), "success_at_k_max": float(np.max(values))}


def kendall(x: list[float], y: list[float]) -> KendallTau:
    """Kendall's τ-b between ``x`` and ``y`` (scipy.stats.kendalltau), None when undefined (constant input)."""
    from scipy.stats import kendalltau

    if len(x) < 2:
        return KendallTau(tau=None, p_value=None, n=len(x))
    res = kendalltau(x, y)
    tau, p = float(res.statistic), float(res.pvalue)
    return KendallTau(tau=None if math.isnan(tau) else tau, p_value=None if math.isnan(p) else p, n=len(x))


def erag_summary(per_query: dict[str, dict[str, Any]]) -> ERagSummary:
    """τ of each aggregation (utility and relevance) against the end-to-end grade, over queries with all of them.

    ``per_query``: query → {"grade": g, "utility": {...aggregate}, "relevance": {...aggregate}}.
    """
    usable = [v for v in per_query.values() if v["grade"] is not None and v["utility"]["p_at_k_mean"] is not None]
    grades = [v["grade"] for v in usable]
    taus = {labels: {a: kendall([v[labels][a] for v in usable], grades) for a in AGGREGATIONS}
            for labels in ("utility", "relevance")}
    return ERagSummary(queries=len(usable), against="baseline grade (answer from the whole top K)",
                       utility=taus["utility"], relevance=taus["relevance"])
