"""Cause shares whose intervals include attribution uncertainty (``--repeats N`` > 1).

With repeats, a query's cause is itself uncertain: an intervention smaller than the one that named the
cause may have fixed the query on some repeats and not others. Per failing query q and each such
intervention v (ordered smallest first, :func:`ragdiag.triage.smallest.ordered`), with p_v the share of
its N repeats that fix the query, a resample of those repeats (N draws with replacement) holds on every
one with probability p_v^N; the query's cause is then v's with probability
π_q(c_v) = p_v^N · Π_{u before v} (1 − p_u^N), and the cause found otherwise (the primary's intervention
held on every repeat, so p = 1 for it). The baseline's verdict (failing, or flaky) is held fixed.

The interval is a two-level percentile bootstrap (95%, ``numpy.random.default_rng(seed)``): each resample
draws the failing queries with replacement (query sampling) and, for each drawn query, its cause from π_q
(repeat sampling); share_c is the resample's fraction of queries with cause c. Without repeats π_q is the
cause found with probability 1 and the interval is query sampling alone
(:func:`ragdiag.triage.summary.cause_shares`).
"""

from __future__ import annotations

import numpy as np

from ragdiag.sweep import stats
from ragdiag.triage.smallest import cause_of, ordered
from ragdiag.triage.tree import CAUSES, Evidence


def cause_probabilities(ev: Evidence, cause: str) -> dict[str, float]:
    """π_q: cause → probability under a resample of the repeats (sums to 1)."""
    out: dict[str, float] = {}
    left = 1.0
    for label in ordered(ev):
        alt = cause_of(ev, label)
        if alt is None or not ev.ran(label):
            continue
        grades = [ev.grades.get(label), *ev.repeat_grades.get(label, [])]
        if len(grades) < ev.repeats:  # failed on repeat 0: never asked again, never holds
            continue
        p = sum(ev.fixes_with(g) for g in grades) / len(grades)
        if p >= 1.0 and alt == cause:
            break  # the intervention that named the cause: smaller ones are all counted
        hold = p ** ev.repeats
        if hold > 0:
            out[alt] = out.get(alt, 0.0) + left * hold
            left *= 1 - hold
    out[cause] = out.get(cause, 0.0) + left
    return out


def attribution_intervals(probabilities: list[dict[str, float]], bootstrap: int,
                          seed: int) -> dict[str, tuple[float, float]]:
    """cause → (ci_low, ci_high) of its share, resampling queries and, per query, its cause from π_q."""
    n = len(probabilities)
    matrix = np.array([[p.get(c, 0.0) for c in CAUSES] for p in probabilities])
    cum = np.cumsum(matrix, axis=1)
    cum[:, -1] = 1.0  # rounding: the last cause closes every row
    rng = np.random.default_rng(seed)
    shares = np.empty((bootstrap, len(CAUSES)))
    for b in range(bootstrap):
        rows = rng.integers(0, n, n)
        u = rng.random(n)
        codes = (u[:, None] >= cum[rows]).sum(axis=1)
        shares[b] = np.bincount(codes, minlength=len(CAUSES))[: len(CAUSES)] / n
    alpha = (1 - stats.LEVEL) / 2
    low, high = np.quantile(shares, [alpha, 1 - alpha], axis=0)
    return {c: (float(low[i]), float(high[i])) for i, c in enumerate(CAUSES)}
