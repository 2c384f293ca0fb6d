"""The gate: per-metric paired tests, family correction, decisions, planning and the judge split.

Formulas and sources: :mod:`ragdiag.compare.paired` (tests, Holm / Benjamini–Hochberg),
:mod:`ragdiag.compare.planning` (Sakai's topic set size design, judge variance).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ragdiag.compare import clustered, planning, sequential_gate
from ragdiag.compare import paired as pt
from ragdiag.compare.inputs import MIN_QUERIES, Paired
from ragdiag.compare.sequential_gate import SequentialOptions
from ragdiag.errors import RagdiagError
from ragdiag.results.compare import CompareResult, JudgeSplit, MetricComparison, PlanEntry

WORST_LISTED = 10


@dataclass(frozen=True)
class GateOptions:
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    max_drop: float = 0.01
    seed: int = 0
    plan: bool = False
    mde: float = 0.02
    power: float = 0.8
    strict: bool = False
    draws: int = pt.RANDOMIZATION_DRAWS
    resamples: int = pt.BOOTSTRAP_RESAMPLES


def _groups(defined: np.ndarray) -> dict[bytes, list[int]]:
    """Metric columns sharing the same defined queries, tested together (one draw matrix each)."""
    groups: dict[bytes, list[int]] = {}
    for j in range(defined.shape[1]):
        groups.setdefault(defined[:, j].tobytes(), []).append(j)
    return groups


def _new(data: Paired) -> np.ndarray:
    """The new side's (n, m) values: the parts that compare two sides run only when --new was given."""
    if data.new is None:
        raise ValueError("comparing needs both sides: Paired.new is None (no --new)")
    return data.new


def _none(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def regression_level(o: GateOptions, metrics: int) -> float:
    """The level a regression is decided at, before the family is seen: α/m, the first step of Holm
    and of Benjamini–Hochberg (the level at which one metric is rejected whatever the others' p), α
    with no correction. The queries needed and ``--plan`` size the test at this level."""
    return o.alpha if o.correction == "none" else o.alpha / max(metrics, 1)


_STATISTICS = ("mean_base", "mean_new", "delta", "ci_low", "ci_high", "p", "p_adjusted", "sd_diff")


def _decidable(mc: MetricComparison, values: np.ndarray) -> None:
    """Every statistic a decision reads is finite, else one error naming it: a NaN or ±inf never decides."""
    for name in _STATISTICS:
        value = getattr(mc, name)
        if value is None or math.isfinite(value):
            continue
        largest = float(np.nanmax(np.abs(values))) if values.size else math.nan
        raise RagdiagError(f"metric {mc.metric!r}: {name} is not finite ({value}); per-query values as large as "
                           f"{largest:.3g} overflow float64 when subtracted or averaged: rescale the metric")


def compare_metrics(data: Paired, o: GateOptions) -> tuple[list[MetricComparison], list[str]]:
    """One :class:`MetricComparison` per metric, decisions taken at the family-adjusted level."""
    sign = np.where(data.lower_is_better, -1.0, 1.0)
    with np.errstate(all="ignore"):
        diff = _new(data) - data.base
    gain = diff * sign
    defined = ~np.isnan(diff)
    m = len(data.metrics)
    p, low, high, details = np.empty(m), np.empty(m), np.empty(m), []
    for columns in _groups(defined).values():
        rows = defined[:, columns[0]]
        if rows.sum() < MIN_QUERIES:
            raise RagdiagError(f"metric {data.metrics[columns[0]]!r} is defined on {int(rows.sum())} paired queries; "
                               f"compare needs at least {MIN_QUERIES}")
        with np.errstate(all="ignore"):
            if data.clusters is None:
                outcome = pt.run_test(o.test, gain[rows][:, columns], o.max_drop, o.alpha, o.seed, o.draws, o.resamples)
            else:
                groups = clustered.cluster_index([c for c, keep in zip(data.clusters, rows) if keep])
                outcome = clustered.run_test(o.test, gain[rows][:, columns], groups, o.max_drop, o.alpha, o.seed,
                                             o.draws, o.resamples)
        p[columns], low[columns], high[columns] = outcome.p, outcome.ci_low, outcome.ci_high
        details.append(outcome.detail)
    with np.errstate(all="ignore"):
        p_adjusted = pt.adjust(np.where(np.isfinite(p), p, 1.0), o.correction, o.alpha)
    level = regression_level(o, m)
    out = []
    for j, name in enumerate(data.metrics):
        rows = defined[:, j]
        d = diff[rows, j]
        with np.errstate(all="ignore"):
            sd = float(d.std(ddof=1))
            mean_gain = float(gain[rows, j].mean())
            d_z = _none(float(pt.effect_size(d[:, None])[0]))
            mean_base, mean_new = float(data.base[rows, j].mean()), float(_new(data)[rows, j].mean())
        mc = MetricComparison(
            metric=name, n=int(rows.sum()), mean_base=mean_base, mean_new=mean_new, delta=float(d.mean()),
            ci_low=float(min(sign[j] * low[j], sign[j] * high[j])), ci_high=float(max(sign[j] * low[j], sign[j] * high[j])),
            p=float(p[j]), p_adjusted=float(p_adjusted[j]) if math.isfinite(p[j]) else math.nan, d_z=d_z,
            decision="inconclusive", queries_needed=None, direction="lower" if data.lower_is_better[j] else "higher",
            sd_diff=sd)
        _decidable(mc, np.concatenate([data.base[rows, j], _new(data)[rows, j]]))
        scale = float(np.abs(gain[rows, j]).max())
        mc.decision = pt.decide(mc.p_adjusted, low[j], high[j], o.max_drop, o.alpha, scale)
        if mc.decision == "inconclusive":
            gap = float(pt.margin_units(np.array([[mean_gain], [scale]]), o.max_drop)[0, 0])
            toward = level if gap < 0 else o.alpha  # a regression is decided at the family's level, no regression at α
            mc.queries_needed = planning.queries_needed(sd, abs(mean_gain + o.max_drop) if gap else 0.0, toward, o.power)
        out.append(mc)
    return out, list(dict.fromkeys(details))


def plan_entries(data: Paired, o: GateOptions) -> list[PlanEntry]:
    """Per metric: queries needed to detect a drop of ``mde`` (beyond ``max_drop``) with ``power`` at the
    level a regression is decided at (:func:`regression_level`), and the drop detectable at the current
    n; σ from the paired differences, or √2·sd of one run."""
    level = regression_level(o, len(data.metrics))
    entries = []
    for j, name in enumerate(data.metrics):
        if data.new is not None:
            values = data.new[:, j] - data.base[:, j]
            values = values[~np.isnan(values)]
            sd, source = float(values.std(ddof=1)), "paired differences"
        else:
            values = data.base[:, j][~np.isnan(data.base[:, j])]
            sd, source = math.sqrt(2) * float(values.std(ddof=1)), "unpaired bound: √2 × sd of one run's scores"
        if not math.isfinite(sd):
            raise RagdiagError(f"metric {name!r}: the standard deviation of its values is not finite ({sd}); rescale "
                               "the metric")
        n = len(values)
        effect = o.mde - o.max_drop
        needed = planning.queries_needed(sd, effect, level, o.power)
        entries.append(PlanEntry(
            metric=name, n=n, sd_diff=sd, sd_source=source, mde=o.mde, power=o.power, queries_needed=needed,
            mde_at_n=o.max_drop + planning.mde_at_n(sd, n, level, o.power),
            power_at_needed=None if needed is None else planning.power_at_n(sd, effect, needed, level)))
    return entries


def judge_split(data: Paired, o: GateOptions) -> list[JudgeSplit] | None:
    """With repeated grades: the variance of the per-query mean grade (or of its paired difference)
    split into between-query and judge parts, and whether a repeat or a query buys more per call.
    ``sigma2_judge`` is the judge variance of one grade summed over the sides (base + new), its interval
    a query bootstrap (:func:`planning.judge_interval`)."""
    sides = [r for r in (data.base_repeats, data.new_repeats) if r is not None]
    found = [planning.judge_variance(r) for r in sides]
    judges = [j for j in found if j is not None]
    if not judges:
        return None
    values = data.base[:, 0] if data.new is None else data.new[:, 0] - data.base[:, 0]
    split = planning.variance_split(values, judges)
    sigma2 = sum(j.sigma2 for j in judges)
    k = float(np.mean([j.k for j in judges]))
    choice = planning.repeat_or_query(split["between_part"], sigma2, len(values), k, 1 if data.new is None else 2)
    ci = list(planning.judge_interval(judges, o.alpha, o.seed, o.resamples))
    return [JudgeSplit(metric=data.metrics[0], k=k, sigma2_judge=sigma2, sigma2_judge_ci=ci, variance=split["total"],
                       judge_part=split["judge_part"], between_part=split["between_part"],
                       judge_share=split["judge_part"] / split["total"] if split["total"] > 0 else 0.0,
                       repeat_calls=choice["repeat_calls"], query_calls=choice["query_calls"],
                       variance_cut_per_call_repeat=choice["variance_cut_per_call_repeat"],
                       variance_cut_per_call_query=choice["variance_cut_per_call_query"], advice=choice["advice"],
                       sides=len(judges), sigma2_judge_ci_method=f"{100 * (1 - 2 * o.alpha):g}% BCa bootstrap over "
                       f"queries, {o.resamples:,} resamples, seed {o.seed}")]


def worst_queries(data: Paired, metrics: list[MetricComparison]) -> list[dict]:
    """The most regressed queries: lowest mean standardised gain over the metrics (gain / sd of Δ)."""
    sign = np.where(data.lower_is_better, -1.0, 1.0)
    diff = _new(data) - data.base
    scale = np.array([mc.sd_diff if mc.sd_diff else 1.0 for mc in metrics])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a query where every metric is undefined: NaN, skipped
        score = np.nanmean(diff * sign / scale, axis=1)
    order = np.argsort(score, kind="stable")[:WORST_LISTED]
    return [{"query_id": data.ids[i], "delta": {name: _none(diff[i, j]) for j, name in enumerate(data.metrics)}}
            for i in order if score[i] < 0]  # NaN compares False: left out


def gate(data: Paired, o: GateOptions, meta: dict, sequential: SequentialOptions | None = None,
         order: np.ndarray | None = None) -> CompareResult:
    """The whole result (the caller adds the run record); ``sequential``: the anytime-valid replay."""
    result = CompareResult(meta=meta)
    if data.new is not None and sequential is not None:
        result.metrics, result.sequential = sequential_gate.run(data, o.alpha, o.max_drop, o.seed, sequential, order)
        result.meta["test_detail"] = (f"{result.sequential.sequence} confidence sequences, e-Holm over the metrics, "
                                      f"stopped after {result.sequential.stopped_at} of {len(data.ids)} queries")
    elif data.new is not None:
        result.metrics, details = compare_metrics(data, o)
        result.meta["test_detail"] = "; ".join(details)
    if data.new is not None:
        failing = {"regression", "inconclusive"} if o.strict else {"regression"}
        result.decision = "fail" if any(mc.decision in failing for mc in result.metrics) else "pass"
        result.worst = worst_queries(data, result.metrics)
    if o.plan or result.metrics:
        result.meta["plan_alpha"] = regression_level(o, len(data.metrics))
    if o.plan:
        result.plan = plan_entries(data, o)
    result.judge = judge_split(data, o)
    return result


def per_query_rows(data: Paired) -> list[dict]:
    """``--per-query``: one row per query, each metric's Δ = new − base under its own name, and the
    two values as ``METRIC:base`` / ``METRIC:new`` (a flat table for triage or ``correlate --table``)."""
    rows = []
    for i, query in enumerate(data.ids):
        row: dict = {"query_id": query}
        for j, name in enumerate(data.metrics):
            base, new = data.base[i, j], _new(data)[i, j]
            row[name] = _none(new - base)
            row[f"{name}:base"], row[f"{name}:new"] = _none(base), _none(new)
        rows.append(row)
    return rows
