"""What a change to real queries costs retrieval against graded qrels (paper 001 §4.5 on a user's
own data): the changed queries are searched like the originals, and per query the differences in
N-Recall4+@K, RA-nWG@K (:mod:`ragdiag.metrics.graded_utility`) and recall@K (trec_eval through
pytrec_eval, relevant = grade ≥ gold) are taken, changed − original. Means over the changed
queries come with paired bootstrap intervals (one set of draws over queries for every column,
:mod:`ragdiag.evaluate.bootstrap`); the queries that lose the most are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from ragdiag.evaluate import bootstrap
from ragdiag.evaluate.evaluation import EvaluateParams
from ragdiag.evaluate.inputs import GradedQrels, grade_matrix
from ragdiag.measures.registry import QUERY_IMPACT
from ragdiag.measures.scoring import MeasureScorer
from ragdiag.results.probes import MetricChange, QueryImpact, WorstQuery

T = TypeVar("T")

METRICS = QUERY_IMPACT.names  # ("nrecall4", "ra_nwg", "recall")


def per_query_metrics(rankings: Sequence[Sequence[str]], qrels: GradedQrels, query_ids: Sequence[str], k: int,
                      gold: int = 4) -> dict[str, np.ndarray]:
    """N-Recall4+@k, RA-nWG@k and recall@k per query for rankings aligned with ``query_ids``."""
    pools = [qrels.grades[q] for q in query_ids]
    ranked = grade_matrix(rankings, pools)
    from ragdiag.evaluate.inputs import pool_counts

    counts = pool_counts(pools)
    params = EvaluateParams(ks=(k,), pool_depth=max(k, ranked.shape[1]), gold=gold)
    scorer = MeasureScorer(QUERY_IMPACT.measures, query_ids, (k,), params, qrels.grades)
    found = scorer.values(scorer.run(ranked, counts, dict(zip(query_ids, rankings))))
    return {m: found[(m, k)] for m in METRICS}


def query_impact(name: str, query_ids: Sequence[str], originals: Sequence[str], changed: Sequence[str | None],
                 original_rankings: Sequence[Sequence[str]], changed_rankings: Sequence[Sequence[str] | None],
                 qrels: GradedQrels, k: int, replicates: int, seed: int, worst: int = 10) -> QueryImpact:
    """Compare the queries that were changed (``changed[i]`` not None) with their originals."""
    rows = [i for i, text in enumerate(changed) if text is not None]
    return variant_impact(name, [query_ids[i] for i in rows], [originals[i] for i in rows],
                          [[_given(changed[i], query_ids[i])] for i in rows], [original_rankings[i] for i in rows],
                          [[_given(changed_rankings[i], query_ids[i])] for i in rows], qrels, k, replicates, seed, worst,
                          unchanged=len(query_ids) - len(rows))


def _given(value: T | None, query_id: str) -> T:
    """A changed query's text or ranking (None only for the queries left unchanged)."""
    if value is None:
        raise ValueError(f"query {query_id}: changed, but its ranking is missing")
    return value


def variant_impact(name: str, query_ids: Sequence[str], originals: Sequence[str], variants: Sequence[Sequence[str]],
                   original_rankings: Sequence[Sequence[str]], variant_rankings: Sequence[Sequence[Sequence[str]]],
                   qrels: GradedQrels, k: int, replicates: int, seed: int, worst: int = 10,
                   unchanged: int = 0) -> QueryImpact:
    """Each query against its variants (same count per query): per query the change is the mean over
    its variants of variant − original; means over queries with paired bootstrap intervals."""
    ids = list(query_ids)
    before = per_query_metrics(original_rankings, qrels, ids, k) if ids else {m: np.zeros(0) for m in METRICS}
    n_variants = len(variants[0]) if ids else 0
    per_variant = [per_query_metrics([r[v] for r in variant_rankings], qrels, ids, k) for v in range(n_variants)]
    with np.errstate(invalid="ignore"):
        after = {m: np.nanmean(np.stack([pv[m] for pv in per_variant]), axis=0) if per_variant else np.zeros(0)
                 for m in METRICS}
    diffs = np.stack([after[m] - before[m] for m in METRICS], axis=1) if ids else np.zeros((0, len(METRICS)))
    summaries = bootstrap.summarise(diffs, replicates, seed) if ids else []
    difference = {m: MetricChange(s.value, list(s.ci) if s.ci else None, s.n_defined)
                  for m, s in zip(METRICS, summaries)}

    def mean(values: np.ndarray) -> float | None:
        finite = values[~np.isnan(values)]
        return float(finite.mean()) if finite.size else None

    drop = np.nan_to_num(diffs[:, METRICS.index("ra_nwg")], nan=0.0) if ids else np.zeros(0)
    order = [j for j in np.argsort(drop, kind="stable") if drop[j] < 0]  # only the queries that lose
    losers = []
    for j in order[:worst]:
        j = int(j)
        was, now = {m: _num(before[m][j]) for m in METRICS}, {m: _num(after[m][j]) for m in METRICS}
        losers.append(WorstQuery(ids[j], originals[j], variants[j][0],
                                 nrecall4_before=was["nrecall4"], ra_nwg_before=was["ra_nwg"],
                                 recall_before=was["recall"], nrecall4_after=now["nrecall4"],
                                 ra_nwg_after=now["ra_nwg"], recall_after=now["recall"]))
    return QueryImpact(name=name, k=k, changed_queries=len(ids), unchanged_queries=unchanged,
                       original={m: mean(before[m]) for m in METRICS}, changed={m: mean(after[m]) for m in METRICS},
                       difference=difference, worst=losers)


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
