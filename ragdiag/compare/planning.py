"""How many queries a decision needs, and where the variance of a mean grade comes from.

Topic set size design (Sakai, "Topic set size design", Information Retrieval Journal 19, 2016): for
a one-sided paired t-test at level α with power 1 − β against a true mean difference δ, with σ the
standard deviation of the paired differences,

    n = ((t_{1−α, n−1} + t_{1−β, n−1}) · σ / δ)²,

solved by starting from the normal quantiles and iterating the t-correction until n stops moving.
The minimum detectable effect at a given n is the same equation solved for δ. Given one run only,
the difference's variance is bounded by 2σ² of its per-query scores (no positive correlation
between the systems assumed), Sakai's recommendation when no paired pilot exists.

Judge noise (a grade = the query's true grade + judge error of variance σ²_J, k repeats): the
variance of a per-query mean grade across queries is σ²_Q + σ²_J/k; σ²_J is the pooled within-query
variance of the repeats (df = Σ(k_i − 1)); its interval is a percentile bootstrap over the queries
(Efron & Tibshirani 1993), which assumes nothing of the judge errors' distribution.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from ragdiag.compare import student

MAX_QUERIES = 10**9  # a drop so small that no realistic query set detects it


def queries_needed(sd: float, effect: float, alpha: float, power: float) -> int | None:
    """Smallest n with a one-sided paired t-test of level α reaching ``power`` against a drop of
    ``effect`` (> 0), σ = ``sd``; None when no finite n does (effect 0) or beyond :data:`MAX_QUERIES`."""
    if not effect > 0:
        return None
    if sd <= 0:
        return 2
    n = max(2.0, ((student.norm_isf(alpha) + student.norm_ppf(power)) * sd / effect) ** 2)
    for _ in range(100):
        if n > MAX_QUERIES:
            return None
        df = max(n - 1, 1.0)
        updated = max(2.0, ((student.t_isf(alpha, df) + student.t_ppf(power, df)) * sd / effect) ** 2)
        if abs(updated - n) < 1e-9:
            break
        n = updated
    return int(math.ceil(n - 1e-9))


def mde_at_n(sd: float, n: int, alpha: float, power: float) -> float:
    """The smallest drop detected with ``power`` by a one-sided paired t-test at level α with n queries."""
    return float((student.t_isf(alpha, n - 1) + student.t_ppf(power, n - 1)) * sd / math.sqrt(n))


def power_at_n(sd: float, effect: float, n: int, alpha: float) -> float:
    """The exact power of that test (noncentral t, noncentrality δ√n/σ) — the check on the formula."""
    from scipy.stats import nct

    if sd <= 0:
        return 1.0
    return float(nct.sf(student.t_isf(alpha, n - 1), n - 1, effect * math.sqrt(n) / sd))


@dataclass
class JudgeVariance:
    """σ²_J of one graded file: the pooled within-query variance of its repeated grades, and per query
    the sum of squares and degrees of freedom it pools (what the query bootstrap resamples)."""

    sigma2: float
    squares: np.ndarray  # (n,) Σ_r (y_ir − ȳ_i)² per query
    dfs: np.ndarray  # (n,) k_i − 1 per query (0 for a query graded once)
    inverse_k: float  # mean over queries of 1/k_i: the judge part of a mean grade's variance is σ²_J·mean(1/k)
    k: float  # mean repeats per query


def judge_variance(repeats: Sequence[Sequence[float]]) -> JudgeVariance | None:
    """Pooled σ²_J = Σ_i Σ_r (y_ir − ȳ_i)² / Σ_i (k_i − 1); None when no query has two grades."""
    sizes = np.array([len(r) for r in repeats])
    if not (sizes >= 2).any():
        return None
    squares = np.array([float(((np.asarray(r, dtype=np.float64) - np.mean(r)) ** 2).sum()) if len(r) >= 2 else 0.0
                        for r in repeats])
    dfs = np.maximum(sizes - 1, 0).astype(np.float64)
    return JudgeVariance(float(squares.sum() / dfs.sum()), squares, dfs, float(np.mean(1.0 / np.maximum(sizes, 1))),
                         float(sizes.mean()))


def judge_interval(judges: Sequence[JudgeVariance], alpha: float, seed: int, resamples: int = 2_000) -> tuple[float, float]:
    """BCa bootstrap interval at 1 − 2α of Σ_sides σ²_J, the queries resampled with both sides together
    (they grade the same queries): :func:`scipy.stats.bootstrap` (``paired=True``, ``method="BCa"``;
    Efron 1987), each resample's σ²_J = Σ squares / Σ dfs over its queries. It assumes no distribution
    of the judge's errors: the χ² interval it replaces assumes normal ones and covers 73–75% per side at
    nominal 95% for a judge with rare jumps. Where BCa is undefined (a resample without a repeated
    query), the percentile interval of the resamples that have one."""
    from scipy.stats import bootstrap

    if all(not j.squares.any() for j in judges):
        return 0.0, 0.0  # every repeat equals its query's first grade: no judge noise in any resample

    def pooled(*parts: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return sum((parts[i].sum(axis=axis) / parts[i + 1].sum(axis=axis) for i in range(0, len(parts), 2)),
                       start=np.zeros(()))

    data = tuple(part for j in judges for part in (j.squares, j.dfs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's DegenerateDataWarning: handled below
        found = bootstrap(data, pooled, paired=True, vectorized=True, n_resamples=resamples, method="BCa",
                          confidence_level=1 - 2 * alpha, rng=np.random.default_rng(seed))
    low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        draws = found.bootstrap_distribution[np.isfinite(found.bootstrap_distribution)]
        low, high = (float(v) for v in np.quantile(draws, [alpha, 1 - alpha]))
    return low, high


def variance_split(diff_or_means: np.ndarray, judges: Sequence[JudgeVariance]) -> dict[str, float]:
    """Split the variance of per-query values (a mean grade, or a paired difference of two) into the
    judge part Σ σ²_J·mean(1/k) and the between-query rest (clipped at 0)."""
    total = float(np.var(diff_or_means, ddof=1))
    judge = float(sum(j.sigma2 * j.inverse_k for j in judges))
    return {"total": total, "judge_part": judge, "between_part": max(total - judge, 0.0)}


class RepeatOrQuery(TypedDict):
    """:func:`repeat_or_query`'s answer: the calls each option costs, the variance each cuts per call, the advice."""

    repeat_calls: float
    query_calls: float
    variance_cut_per_call_repeat: float
    variance_cut_per_call_query: float
    advice: str


def repeat_or_query(between: float, sigma2_judge: float, n: int, k: float, sides: int) -> RepeatOrQuery:
    """Which buys more precision per call. With V(n, k) = (σ²_Q + σ²_J/k)/n the variance of the mean:
    one more repeat on every query costs n judge calls per side and lowers V by V(n,k) − V(n,k+1); one
    more query costs one generation and k judge calls per side and lowers V by V(n,k) − V(n+1,k)."""
    k = max(k, 1.0)
    v = (between + sigma2_judge / k) / n
    repeat_calls, query_calls = sides * n, sides * (k + 1)
    repeat_gain = (v - (between + sigma2_judge / (k + 1)) / n) / repeat_calls
    query_gain = (v - (between + sigma2_judge / k) / (n + 1)) / query_calls
    return {"repeat_calls": repeat_calls, "query_calls": query_calls,
            "variance_cut_per_call_repeat": repeat_gain, "variance_cut_per_call_query": query_gain,
            "advice": "another repeat per query" if repeat_gain > query_gain else "another query"}
