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


def compare_metrics(data: Paired, o: GateOptions) -> tuple[list[MetricComparison], list[str]]:
    """One :class:`MetricComparison` per metric, decisions taken at the family-adjusted level."""
    sign = np.where(data.lower_is_better, -1.0, 1.0)
    diff = _new(data) - data.base
    gain = diff * sign
    defined = ~np.isnan(diff)
    m = len(data.metrics)
    p, low, high, details = np.empty(m), np.empty(m), np.empty(m), []
    for columns in _groups(defined).values():
        rows = defined[:, columns[0]]
        if rows.sum() < MIN_QUERIES:
            raise RagdiagError(f"metric {data.metrics[columns[0]]} is defined on {int(rows.sum())} paired queries; "
                               f"compare needs at least {MIN_QUERIES}")
        if data.clusters is None:
            outcome = pt.run_test(o.test, gain[rows][:, columns], o.max_drop, o.alpha, o.seed, o.draws, o.resamples)
        else:
            groups = clustered.cluster_index([c for c, keep in zip(data.clusters, rows) if keep])
            outcome = clustered.run_test(o.test, gain[rows][:, columns], groups, o.max_drop, o.alpha, o.seed, o.draws,
                                         o.resamples)
        p[columns], low[columns], high[columns] = outcome.p, outcome.ci_low, outcome.ci_high
        details.append(outcome.detail)
    p_adjusted = pt.adjust(p, o.correction, o.alpha)
    out = []
    for j, name in enumerate(data.metrics):
        rows = defined[:, j]
        d = diff[rows, j]
        sd = float(d.std(ddof=1))
        decision = pt.decide(p_adjusted[j], low[j], high[j], o.max_drop, o.alpha)
        mean_gain = float(gain[rows, j].mean())
        needed = (planning.queries_needed(sd, abs(mean_gain + o.max_drop), o.alpha, o.power)
                  if decision == "inconclusive" else None)
        ci = sorted((sign[j] * low[j], sign[j] * high[j]))
        out.append(MetricComparison(
            metric=name, n=int(rows.sum()), mean_base=float(data.base[rows, j].mean()),
            mean_new=float(_new(data)[rows, j].mean()), delta=float(d.mean()), ci_low=float(ci[0]), ci_high=float(ci[1]),
            p=float(p[j]), p_adjusted=float(p_adjusted[j]), d_z=_none(float(pt.effect_size(d[:, None])[0])),
            decision=decision, queries_needed=needed, direction="lower" if data.lower_is_better[j] else "higher",
            sd_diff=sd))
    return out, list(dict.fromkeys(details))


def plan_entries(data: Paired, o: GateOptions) -> list[PlanEntry]:
    """Per metric: queries needed to detect a drop of ``mde`` (beyond ``max_drop``) with ``power``, and
    the drop detectable at the current n; σ from the paired differences, or √2·sd of one run."""
    entries = []
    for j, name in enumerate(data.metrics):
        if data.new is not None:
            values = data.new[:, j] - data.base[:, j]
            values = values[~np.isnan(values)]
            sd, source = float(values.std(ddof=1)), "paired differences"
        else:
            values = data.base[:, j][~np.isnan(data.base[:, j])]
            sd, source = math.sqrt(2) * float(values.std(ddof=1)), "unpaired bound: √2 × sd of one run's scores"
        n = len(values)
        effect = o.mde - o.max_drop
        needed = planning.queries_needed(sd, effect, o.alpha, o.power)
        entries.append(PlanEntry(
            metric=name, n=n, sd_diff=sd, sd_source=source, mde=o.mde, power=o.power, queries_needed=needed,
            mde_at_n=o.max_drop + planning.mde_at_n(sd, n, o.alpha, o.power),
            power_at_needed=None if needed is None else planning.power_at_n(sd, effect, needed, o.alpha)))
    return entries


def judge_split(data: Paired, o: GateOptions) -> list[JudgeSplit] | None:
    """With repeated grades: the variance of the per-query mean grade (or of its paired difference)
    split into between-query and judge parts, and whether a repeat or a query buys more per call."""
    sides = [r for r in (data.base_repeats, data.new_repeats) if r is not None]
    found = [planning.judge_variance(r, o.alpha) for r in sides]
    judges = [j for j in found if j is not None]
    if not judges:
        return None
    values = data.base[:, 0] if data.new is None else data.new[:, 0] - data.base[:, 0]
    split = planning.variance_split(values, judges)
    sigma2 = sum(j.sigma2 for j in judges)
    k = float(np.mean([j.k for j in judges]))
    choice = planning.repeat_or_query(split["between_part"], sigma2, len(values), k, 1 if data.new is None else 2)
    ci = [sum(j.ci[0] for j in judges), sum(j.ci[1] for j in judges)]
    return [JudgeSplit(metric=data.metrics[0], k=k, sigma2_judge=sigma2, sigma2_judge_ci=ci, variance=split["total"],
                       judge_part=split["judge_part"], between_part=split["between_part"],
                       judge_share=split["judge_part"] / split["total"] if split["total"] > 0 else 0.0,
                       repeat_calls=choice["repeat_calls"], query_calls=choice["query_calls"],
                       variance_cut_per_call_repeat=choice["variance_cut_per_call_repeat"],
                       variance_cut_per_call_query=choice["variance_cut_per_call_query"], advice=choice["advice"])]


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
    if o.plan:
        result.plan = plan_entries(data, o)
    result.judge = judge_split(data, o)
    result.present = tuple(k for k in ("meta", "decision", "metrics", "plan", "judge", "sequential", "worst", "run_record")
                           if k != "sequential" or result.sequential is not None)
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
