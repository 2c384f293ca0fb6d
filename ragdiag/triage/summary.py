"""``triage.json`` and ``per_query.jsonl`` from a finished :class:`ragdiag.triage.run.Triage`.

Cause shares are over the triaged queries: share_c = (1/n) Σ_q 1[cause(q) = c], with a 95%
percentile bootstrap interval resampling queries (:func:`ragdiag.sweep.stats.mean_with_ci`,
``numpy.random.default_rng(seed)``); with ``--repeats`` > 1, resampling queries and each query's repeats
(:mod:`ragdiag.triage.attribution`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragdiag.results.triage import (
    CauseShare,
    LeftOut,
    TriageCalls,
    TriageCost,
    TriagedQuery,
    TriageMeta,
    TriageResult,
)
from ragdiag.sweep import stats
from ragdiag.triage.attribution import attribution_intervals, cause_probabilities
from ragdiag.triage.erag import aggregate, erag_summary
from ragdiag.triage.interventions import BASELINE
from ragdiag.triage.run import QueryState, Triage
from ragdiag.triage.tree import CAUSES, FIXES, evidence_of


def cause_shares(causes: list[str], bootstrap: int, seed: int) -> dict[str, CauseShare]:
    """cause → :class:`CauseShare` (share, ci_low, ci_high, count, fix) over the triaged queries (every cause listed).

    One percentile bootstrap (``scipy.stats.bootstrap``, 95%) resamples the queries once for all causes.
    """
    codes = np.array([CAUSES.index(c) for c in causes])
    low = high = None
    if len(codes) and bootstrap:
        from scipy.stats import bootstrap as scipy_bootstrap

        def shares(sample: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.stack([(sample == i).mean(axis=axis) for i in range(len(CAUSES))])

        if len(codes) > 1 and np.ptp(codes) > 0:
            res = scipy_bootstrap((codes,), shares, n_resamples=bootstrap, method="percentile", confidence_level=stats.LEVEL,
                                  rng=np.random.default_rng(seed), vectorized=True)
            low, high = res.confidence_interval.low, res.confidence_interval.high
        else:  # every resample has the same shares
            low = high = shares(codes)
    out = {}
    for i, cause in enumerate(CAUSES):
        count = int((codes == i).sum())
        out[cause] = CauseShare(share=count / len(codes) if len(codes) else None,
                                ci_low=None if low is None else float(low[i]),
                                ci_high=None if high is None else float(high[i]), count=count, fix=FIXES[cause])
    return out


def with_evidence(shares: dict[str, CauseShare], triaged: list[QueryState], references: bool) -> dict[str, CauseShare]:
    """Each cause's share with, per evidence (qrels, references), how many of its queries rest on it."""
    for state in triaged:
        if state.passed:
            continue
        counts = shares[state.cause or "unexplained"].evidence
        for kind in rests_on(state, references):
            counts[kind] = counts.get(kind, 0) + 1
    return shares


def with_attribution(shares: dict[str, CauseShare], failing: list[QueryState], bootstrap: int,
                     seed: int) -> dict[str, CauseShare]:
    """The shares' intervals over queries and repeats (``--repeats`` > 1; :mod:`ragdiag.triage.attribution`)."""
    if not failing or not bootstrap:
        return shares
    probabilities = [cause_probabilities(s.evidence, s.cause or "unexplained") for s in failing]
    for cause, (low, high) in attribution_intervals(probabilities, bootstrap, seed).items():
        shares[cause].ci_low, shares[cause].ci_high = low, high
    return shares


def _utility(state: QueryState) -> dict[str, float]:
    return {lb.split(":", 1)[1]: a.grade for lb, a in state.answered.items()
            if lb.startswith("single:") and a.grade is not None}


def _erag_row(state: QueryState, k: int) -> dict[str, Any]:
    top = state.query.pool[:k]
    relevant = set(state.query.relevant)
    utility = _utility(state)
    return {"grade": state.evidence.grades.get(BASELINE),
            "utility": aggregate([utility[d] for d in top if d in utility]),
            "relevance": aggregate([1.0 if d in relevant else 0.0 for d in top])}


def rests_on(state: QueryState, references: bool) -> list[str]:
    """The evidence the query's cause rests on (none for a passed query)."""
    cause = state.cause or "unexplained"
    return [] if state.passed else evidence_of(state.evidence, cause, references)


def query_entry(state: QueryState, references: bool) -> TriagedQuery:
    """The triage.json entry of one triaged query."""
    return TriagedQuery(id=state.query.id, cause=state.cause, also=list(state.also),
                        grades=dict(state.evidence.grades), calls=state.calls, evidence=rests_on(state, references))


def per_query_row(state: QueryState, erag: dict[str, Any] | None, references: bool) -> dict[str, Any]:
    """The per_query.jsonl line of a query: verdict, evidence (contexts, answers, grades), calls."""
    q = state.query
    row = {"id": q.id, "triaged": state.triaged, "cause": state.cause, "also": state.also,
           "evidence": rests_on(state, references) if state.triaged else [],
           "baseline_grade": state.evidence.grades.get(BASELINE),
           "grades": dict(state.evidence.grades), "calls": state.calls, "reused": state.reused,
           "first_relevant_rank": q.first_relevant_rank(), "relevant": q.relevant,
           "contexts": {lb: list(ids) for lb, ids in state.planned.items() if lb in state.answered},
           "answers": {lb: a.answer for lb, a in state.answered.items()},
           "errors": {lb: a.error for lb, a in state.answered.items() if a.error}}
    if state.evidence.repeats > 1 or state.judge_check:
        row["repeat_grades"] = dict(state.evidence.repeat_grades)
        row["judge_check"] = state.judge_check
    if state.evidence.repeats > 1 and state.triaged and not state.passed and state.cause:
        row["cause_probability"] = cause_probabilities(state.evidence, state.cause).get(state.cause)
    if erag is not None:
        row["utility"] = _utility(state)
        row["erag"] = erag
    if state.sufficiency.top_k is not None:  # reference-free: the rater's verdicts and the judge's abstentions
        row["sufficient_context"] = state.sufficiency.to_json(len(state.planned.get(BASELINE, ())))
        row["abstained"] = {lb: a.abstained for lb, a in state.answered.items()}
    if state.left_out:
        row["left_out"] = state.left_out
    return row


def build(triage: Triage, cost: dict[str, Any], bootstrap: int, seed: int, client_stats: dict[str, Any],
          meta: TriageMeta) -> tuple[TriageResult, list[dict[str, Any]], list[tuple[str, str, int]] | None]:
    """(triage.json as a :class:`TriageResult`, per_query.jsonl rows, utility qrels rows or None)."""
    from ragdiag.triage.erag import utility_rows

    triaged = [s for s in triage.states if s.triaged]
    references = triage.references is not None
    failing = [s for s in triaged if not s.passed]
    causes = [s.cause or "unexplained" for s in failing]
    single = "single-passage" in triage.cfg.interventions
    erag_rows = {s.query.id: _erag_row(s, triage.cfg.k) for s in triaged} if single else {}
    paid = triage.paid()
    paid_triaged = sum(s.calls for s in triaged)
    n = len(triaged)
    by_label: dict[str, int] = {}
    for state in triaged:
        for label in state.answered:
            name = label.split("@")[0].split(":")[0]
            by_label[name] = by_label.get(name, 0) + 1
    result = TriageResult(
        meta=meta,
        queries=[query_entry(s, references) for s in triaged],
        causes=with_evidence(with_attribution(cause_shares(causes, bootstrap, seed), failing, bootstrap, seed)
                             if triage.cfg.repeats > 1 else cause_shares(causes, bootstrap, seed), triaged, references),
        calls=TriageCalls(paid=paid, reused=sum(s.reused for s in triage.states), triaged_queries=n,
                          failing_queries=len(causes), paid_triaged=paid_triaged,
                          paid_per_triaged_query=paid_triaged / n if n else None,
                          baseline_queries=sum(1 for s in triage.states if BASELINE in s.answered),
                          contexts_per_intervention=by_label),
        cost=TriageCost(**cost, max_calls=triage.cfg.max_calls, paid=paid, client=client_stats),
        left_out=[LeftOut(id=s.query.id, reason=s.left_out) for s in triage.states if s.left_out],
        notes=list(triage.notes),
        erag=erag_summary(erag_rows) if single else None,
    )
    utility = utility_rows({s.query.id: _utility(s) for s in triaged}) if single else None
    rows = [per_query_row(s, erag_rows.get(s.query.id), references) for s in triage.states]
    return result, rows, utility
