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
variance of the repeats (df = Σ(k_i − 1)), its interval from χ²_df.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

MAX_QUERIES = 10**9  # a drop so small that no realistic query set detects it


def queries_needed(sd: float, effect: float, alpha: float, power: float) -> int | None:
    """Smallest n with a one-sided paired t-test of level α reaching ``power`` against a drop of
    ``effect`` (> 0), σ = ``sd``; None when no finite n does (effect 0) or beyond :data:`MAX_QUERIES`."""
    from scipy.stats import norm, t

    if not effect > 0:
        return None
    if sd <= 0:
        return 2
    n = max(2.0, ((norm.ppf(1 - alpha) + norm.ppf(power)) * sd / effect) ** 2)
    for _ in range(100):
        if n > MAX_QUERIES:
            return None
        df = max(n - 1, 1.0)
        updated = max(2.0, ((t.ppf(1 - alpha, df) + t.ppf(power, df)) * sd / effect) ** 2)
        if abs(updated - n) < 1e-9:
            break
        n = updated
    return int(math.ceil(n - 1e-9))


def mde_at_n(sd: float, n: int, alpha: float, power: float) -> float:
    """The smallest drop detected with ``power`` by a one-sided paired t-test at level α with n queries."""
    from scipy.stats import t

    return float((t.ppf(1 - alpha, n - 1) + t.ppf(power, n - 1)) * sd / math.sqrt(n))


def power_at_n(sd: float, effect: float, n: int, alpha: float) -> float:
    """The exact power of that test (noncentral t, noncentrality δ√n/σ) — the check on the formula."""
    from scipy.stats import nct, t

    if sd <= 0:
        return 1.0
    return float(nct.sf(t.ppf(1 - alpha, n - 1), n - 1, effect * math.sqrt(n) / sd))


@dataclass
class JudgeVariance:
    """σ²_J of one graded file: the pooled within-query variance of its repeated grades."""

    sigma2: float
    ci: tuple[float, float]
    df: int
    inverse_k: float  # mean over queries of 1/k_i: the judge part of a mean grade's variance is σ²_J·mean(1/k)
    k: float  # mean repeats per query


def judge_variance(repeats: Sequence[Sequence[float]], alpha: float) -> JudgeVariance | None:
    """Pooled σ²_J = Σ_i Σ_r (y_ir − ȳ_i)² / Σ_i (k_i − 1) with its (1 − α) χ² interval; None when
    no query has two grades."""
    from scipy.stats import chi2

    sizes = np.array([len(r) for r in repeats])
    if not (sizes >= 2).any():
        return None
    squares = sum(float(((np.asarray(r, dtype=np.float64) - np.mean(r)) ** 2).sum()) for r in repeats if len(r) >= 2)
    df = int((sizes[sizes >= 2] - 1).sum())
    sigma2 = squares / df
    ci = (squares / chi2.ppf(1 - alpha / 2, df), squares / chi2.ppf(alpha / 2, df))
    return JudgeVariance(sigma2, ci, df, float(np.mean(1.0 / np.maximum(sizes, 1))), float(sizes.mean()))


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
