"""``compare --sequential``: the paired gate replayed query by query, decided as soon as it is known.

The paired queries are read in a seeded random order (or the order of ``--order-col``). After every
``look_every`` queries each metric's confidence sequence (:mod:`ragdiag.compare.sequential`) is
updated, and the family of metrics is tested with e-Holm on the e-processes of the margin's two
null hypotheses: a metric is a **regression** once H0: E[g] ≥ −m is rejected, **no regression** once
H0: E[g] ≤ −m is rejected, and stays **inconclusive** when neither happened by the last query (or
``max_queries``). Decisions are kept once reached (sticky); the family-wise error stays ≤ α for each of
the two families whenever the replay is stopped, because the mean of the true nulls' e-processes is
itself an e-process (Ville's inequality; Vovk & Wang 2021).
Methods: docs/methods.md#sequential-gate-and-clustered-errors-compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ragdiag.compare import sequential as cs
from ragdiag.compare.inputs import MIN_QUERIES, Paired
from ragdiag.errors import RagdiagError
from ragdiag.results.compare import MetricComparison, MetricSequence, SequentialRun

RUN_BOUNDS = (0.0, 1.0)  # every evaluate measure is a share or a normalised gain in [0, 1]
GRADE_BOUNDS = (1.0, 5.0)  # the judge's 1–5 scale
BURN_IN = 20  # the asymptotic sequence's first look (its guarantee is asymptotic)


@dataclass(frozen=True)
class SequentialOptions:
    sequence: str = "asymptotic"  # or "betting" (needs the metric's bounds)
    look_every: int = 1
    burn_in: int = BURN_IN
    max_queries: int | None = None
    bounds: tuple[float, float] | None = None  # a table's per-query value range (--bounds)
    order_col: str | None = None
    planned: int | None = None  # the queries the asymptotic sequence is tuned for (t*); default: those replayed


def value_bounds(kind: str, o: SequentialOptions) -> tuple[float, float] | None:
    """The range a per-query value can take: runs [0, 1], graded files [1, 5], tables ``--bounds``."""
    if o.bounds is not None:
        return o.bounds
    return {"runs": RUN_BOUNDS, "graded": GRADE_BOUNDS}.get(kind)


def replay_order(n: int, seed: int, order: np.ndarray | None = None) -> np.ndarray:
    """The order queries are read in: ``order``'s ascending ranks (stable), else a seeded permutation."""
    if order is not None:
        return np.argsort(order, kind="stable")
    return np.random.default_rng(seed).permutation(n)


def check(data: Paired, o: SequentialOptions) -> str:
    """The sequence every metric will use; a one-line error for a betting request without bounds."""
    bounds = value_bounds(data.kind, o)
    if o.sequence == "betting" and bounds is None:
        raise RagdiagError("--sequence betting needs the metric's bounds: a per-query table's values have none known; "
                           "give --bounds LOW,HIGH (e.g. --bounds 0,1) or use --sequence asymptotic")
    if bounds is not None:
        low, high = bounds
        values = np.concatenate([data.base.ravel(), (data.new if data.new is not None else data.base).ravel()])
        values = values[~np.isnan(values)]
        if values.size and (values.min() < low or values.max() > high):
            raise RagdiagError(f"a per-query value lies outside the bounds [{low:g}, {high:g}] "
                               f"(found {values.min():g} … {values.max():g}); give --bounds that hold every value")
    return o.sequence


def _bounds_for(gains: np.ndarray, kind: str, alpha: float, margin: float, t_star: float,
                o: SequentialOptions, bounds: tuple[float, float] | None) -> cs.Bounds:
    if kind == "betting":
        assert bounds is not None
        span = bounds[1] - bounds[0]
        return cs.betting(gains, alpha, margin, -span, span, max(MIN_QUERIES, 1))
    return cs.asymptotic(gains, alpha, margin, t_star, max(o.burn_in, 2))


def run(data: Paired, alpha: float, margin: float, seed: int, o: SequentialOptions,
        order: np.ndarray | None = None) -> tuple[list[MetricComparison], SequentialRun]:
    """Replay the paired queries, look after every ``look_every`` of them, decide each metric once."""
    if data.new is None:
        raise RagdiagError("--sequential compares two sides: give --new")
    kind = check(data, o)
    bounds = value_bounds(data.kind, o)
    n_all = len(data.ids)
    limit = n_all if o.max_queries is None else min(o.max_queries, n_all)
    perm = replay_order(n_all, seed, order)[:limit]
    sign = np.where(data.lower_is_better, -1.0, 1.0)
    diff = (data.new - data.base)[perm]
    gain = diff * sign
    m = len(data.metrics)
    per_metric: list[cs.Bounds] = []
    seen = np.zeros((limit, m), dtype=np.int64)  # defined gains among the first t + 1 queries read
    for j in range(m):
        defined = ~np.isnan(gain[:, j])
        if defined.sum() < MIN_QUERIES:
            raise RagdiagError(f"metric {data.metrics[j]} is defined on {int(defined.sum())} paired queries; "
                               f"compare needs at least {MIN_QUERIES}")
        seen[:, j] = np.cumsum(defined)
        t_star = float(o.planned if o.planned is not None else defined.sum())
        per_metric.append(_bounds_for(gain[defined, j], kind, alpha, margin, t_star, o, bounds))
    looks = sorted(set(range(o.look_every, limit + 1, o.look_every)) | {limit})
    decided_at: list[int | None] = [None] * m
    decision = ["inconclusive"] * m
    e_reg_adj, e_ok_adj = np.zeros(m), np.zeros(m)
    history: list[tuple[int, np.ndarray, np.ndarray]] = []
    stopped = limit
    for t in looks:
        index = seen[t - 1] - 1  # each metric's last defined gain among the first t queries
        e_reg = np.array([b.e_regression[i] if i >= 0 else 0.0 for b, i in zip(per_metric, index)])
        e_ok = np.array([b.e_no_regression[i] if i >= 0 else 0.0 for b, i in zip(per_metric, index)])
        reg, ok = cs.e_holm(e_reg, alpha), cs.e_holm(e_ok, alpha)
        e_reg_adj = np.maximum(e_reg_adj, cs.e_holm_adjusted(e_reg))
        e_ok_adj = np.maximum(e_ok_adj, cs.e_holm_adjusted(e_ok))
        for j in range(m):
            if decided_at[j] is None and (reg[j] or ok[j]):
                decision[j] = "regression" if reg[j] else "no regression"
                decided_at[j] = t
        low = np.array([b.lower[i] if i >= 0 else np.nan for b, i in zip(per_metric, index)])
        high = np.array([b.upper[i] if i >= 0 else np.nan for b, i in zip(per_metric, index)])
        history.append((t, low, high))
        if all(d is not None for d in decided_at):
            stopped = t
            break
    comparisons = []
    sequences = []
    for j, name in enumerate(data.metrics):
        rows = ~np.isnan(diff[:stopped, j])
        d = diff[:stopped, j][rows]
        last_low, last_high = history[-1][1][j], history[-1][2][j]
        ci = sorted((sign[j] * last_low, sign[j] * last_high))
        p_reg = min(1.0, 1.0 / e_reg_adj[j]) if e_reg_adj[j] > 0 else 1.0
        comparisons.append(MetricComparison(
            metric=name, n=int(rows.sum()), mean_base=float(data.base[perm[:stopped], j][rows].mean()),
            mean_new=float(data.new[perm[:stopped], j][rows].mean()), delta=float(d.mean()),
            ci_low=_finite(ci[0]), ci_high=_finite(ci[1]), p=p_reg, p_adjusted=p_reg, d_z=None,
            decision=decision[j], queries_needed=None, direction="lower" if data.lower_is_better[j] else "higher",
            sd_diff=float(d.std(ddof=1)) if len(d) > 1 else None))
        sequences.append(MetricSequence(
            metric=name, sequence=kind, decision=decision[j], decided_at=decided_at[j],
            e_regression=float(e_reg_adj[j]), e_no_regression=float(e_ok_adj[j]),
            n=[t for t, _, _ in history],
            lower=[_none(sign[j] * (lo[j] if sign[j] > 0 else hi[j])) for _, lo, hi in history],
            upper=[_none(sign[j] * (hi[j] if sign[j] > 0 else lo[j])) for _, lo, hi in history]))
    summary = SequentialRun(sequence=kind, order="column " + o.order_col if o.order_col else f"random (seed {seed})",
                            look_every=o.look_every, available=n_all, max_queries=limit, stopped_at=stopped,
                            bounds=None if bounds is None else list(bounds), burn_in=o.burn_in if kind == "asymptotic"
                            else MIN_QUERIES, metrics=sequences)
    return comparisons, summary


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise RagdiagError("the confidence sequence has no bound yet at the last look (too few queries: the first look "
                           "comes after the burn-in); add queries or lower --burn-in")
    return float(value)


def _none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
