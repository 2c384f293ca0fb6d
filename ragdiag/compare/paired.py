"""Paired tests of a regression margin, their intervals and the family correction.

Every function works on the *gain* g_i = s·(new_i − base_i) of each query (s = −1 for a metric where
lower is better), one column per metric, so a regression is always a low mean gain. The one-sided
null hypothesis is H0: E[g] ≥ −m (no drop beyond the margin m = ``--max-drop``); its p-value is small
when the new system is worse by more than m. Intervals are two-sided at 1 − 2α: their ends are the
one-sided (1 − α) bounds the decisions read.

- paired t: :func:`scipy.stats.ttest_rel` (Student 1908), interval mean ± t_{1−α, n−1}·sd/√n;
- Δ, the interval's ends and each resampled mean meet the margin exactly to 12 significant digits
  (:func:`margin_units`): a drop of exactly the margin in decimal (0.30 → 0.29 at 0.01) is not
  beyond it because of binary round-off;
- sign-flip randomization (Fisher 1935; Smucker, Allan & Carterette, CIKM 2007): under H0 each
  shifted gain g_i + m is symmetric about 0, so its sign is exchangeable; exact enumeration of the
  2^n sign vectors for n ≤ 20, else ``draws`` seeded sign vectors, p = (1 + #{T* ≤ T})/(1 + draws)
  (Phipson & Smyth 2010); its interval is the t interval;
- paired percentile bootstrap (Efron & Tibshirani 1993): the resampled means of g, drawn exactly as
  :func:`scipy.stats.bootstrap` draws them (``rng.integers(0, n, (B, n))``) but summed as a
  counts × values product; p = (1 + #{ḡ* ≥ −m})/(1 + B);
- family correction: Holm (1979) or Benjamini & Hochberg (1995), computed as
  :func:`statsmodels.stats.multitest.multipletests` computes them (:func:`adjust`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ragdiag.compare import student

TESTS = ("t", "randomization", "bootstrap")
CORRECTIONS = {"holm": "holm", "bh": "fdr_bh", "none": None}
EXACT_MAX = 20  # up to this many queries the randomization test enumerates every sign vector
RANDOMIZATION_DRAWS = 10_000
BOOTSTRAP_RESAMPLES = 2_000
DECISIONS = ("regression", "no regression", "inconclusive")
MARGIN_DIGITS = 12  # Δ meets the margin to 12 significant digits, the digits of correlate's ties
_CHUNK = 1_000  # sign vectors or resamples per matrix product (bounded memory)


@dataclass
class TestOutcome:
    """Per metric (arrays of length m): the one-sided p-value and the 1 − 2α interval of the mean gain."""

    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    detail: str  # how the p-value was computed (exact, draws, resamples)


def margin_units(gain: np.ndarray, margin: float, terms: int = 1) -> np.ndarray:
    """g + m per cell, exactly, in integer units of q = 10^(⌊log10 S⌋ + 1 − d), S = max(max |g|, m) per column.

    g and m are each rounded to d significant digits at the column's scale — d = 12, the digits to
    which correlate compares ties (:func:`ragdiag.metrics.correlation.round_significant`), measured
    against the column's largest value so that a Δ of 0 up to round-off is 0 — so that a Δ equal to
    the margin up to round-off (0.29 − 0.30 against 0.01) is equal. d drops below 12 only when a sum
    of ``terms`` such integers could pass 2^53, so that every such sum is exact in float64 whatever
    the summation order (a bootstrap resample's sum of n values, one metric or ten)."""
    g = np.asarray(gain, dtype=np.float64)
    scale = np.maximum(np.abs(g).max(axis=0), margin)
    digits = min(MARGIN_DIGITS, int(math.floor(math.log10(2.0**53 / (2 * max(terms, 1))))))
    decade = np.floor(np.log10(np.where(scale > 0, scale, 1.0)))
    q = 10.0 ** (decade + 1 - digits)
    return np.round(g / q) + np.round(margin / q)


def t_interval(gain: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """mean ± t_{1−α, n−1}·sd/√n per column, the quantile taken as ``t.isf(α)`` (finite for any α > 0,
    where 1 − 2α as a confidence level rounds to 1 below α ≈ 1e−17)."""
    n = gain.shape[0]
    half = student.t_isf(alpha, n - 1) * gain.std(axis=0, ddof=1) / math.sqrt(n)
    mean = gain.mean(axis=0)
    return mean - half, mean + half


def t_test(gain: np.ndarray, margin: float, alpha: float) -> TestOutcome:
    """Paired t: ``ttest_rel(g + m, 0, alternative="less")`` (:func:`ragdiag.compare.student.t_test_less`,
    the same p-values); interval :func:`t_interval`."""
    gain = np.asarray(gain, dtype=np.float64)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # a constant column: handled below
        p = student.t_test_less(gain + margin)
    low, high = t_interval(gain, alpha)
    constant = gain.max(axis=0) - gain.min(axis=0) <= 1e-12 * (np.abs(gain).max(axis=0) + 1e-300)
    if constant.any():  # every query moved by the same c: the interval is [c, c], the test is certain
        mean = gain.mean(axis=0)
        p = np.where(constant, (margin_units(gain[:1], margin)[0] >= 0).astype(np.float64), p)
        low, high = np.where(constant, mean, low), np.where(constant, mean, high)
    return TestOutcome(p, low, high, "paired t")


def _sign_patterns(n: int, start: int, stop: int) -> np.ndarray:
    """Rows start..stop−1 of the 2^n sign vectors as 0/1 bits (bit i of the row number = query i)."""
    rows = np.arange(start, stop, dtype=np.int64)[:, None]
    return ((rows >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)


def randomization_p(gain: np.ndarray, margin: float, draws: int = RANDOMIZATION_DRAWS, seed: int = 0) -> tuple[np.ndarray, str]:
    """Lower-tail sign-flip p-value of Σ(g_i + m) per column: exact for n ≤ 20, else ``draws`` seeded flips.

    With bits b ∈ {0, 1}^n the flipped sum is Σx − 2·b·x, so each chunk of sign vectors is one matrix
    product (no per-draw Python loop). x = g + m in :func:`margin_units`: a gain equal to −m up to
    round-off is 0."""
    n = np.asarray(gain).shape[0]
    x = margin_units(gain, margin, terms=n)  # g + m exactly, in integer units (the p-value is scale-free)
    total = x.sum(axis=0)
    tol = 1e-9 * (np.abs(x).sum(axis=0) + 1e-300)
    if n <= EXACT_MAX:
        count = np.zeros(x.shape[1])
        patterns = 2**n
        for start in range(0, patterns, 1 << 16):
            bits = _sign_patterns(n, start, min(patterns, start + (1 << 16)))
            count += ((total - 2 * (bits @ x)) <= total + tol).sum(axis=0)
        return count / patterns, f"exact over all {patterns:,} sign vectors"
    rng = np.random.default_rng(seed)
    x32 = x.astype(np.float32)
    tol = np.maximum(tol, 1e-5 * np.abs(x).sum(axis=0))  # float32 products: round-off well below this
    count = np.zeros(x.shape[1])
    for done in range(0, draws, _CHUNK):
        size = min(_CHUNK, draws - done)
        raw = np.frombuffer(rng.bytes(size * ((n + 7) // 8)), dtype=np.uint8).reshape(size, -1)
        bits = np.unpackbits(raw, axis=1, count=n).astype(np.float32)
        flipped = total - 2 * (bits @ x32).astype(np.float64)
        count += (flipped <= total + tol).sum(axis=0)
    return (1 + count) / (1 + draws), f"{draws:,} seeded sign-flip draws (seed {seed})"


def _bootstrap_counts(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Chunks of (size, n) resample counts per query, the draws of ``scipy.stats.bootstrap(...,
    rng=default_rng(seed))``: indices ``rng.integers(0, n, (B, n))`` counted per query."""
    rng = np.random.default_rng(seed)
    for done in range(0, resamples, _CHUNK // 4):
        size = min(_CHUNK // 4, resamples - done)
        index = rng.integers(0, n, (size, n))
        index += (np.arange(size, dtype=np.int64) * n)[:, None]  # row r's queries → bins r·n … r·n + n − 1
        yield np.bincount(index.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


def bootstrap_means(gain: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> np.ndarray:
    """(m, B) resampled means: the resample counts (:func:`_bootstrap_counts`) times the values."""
    values = np.asarray(gain, dtype=np.float64)
    n = values.shape[0]
    means = np.empty((values.shape[1], resamples))
    done = 0
    for counts in _bootstrap_counts(n, resamples, seed):
        means[:, done:done + len(counts)] = (counts @ values).T / n
        done += len(counts)
    return means


def bootstrap_test(gain: np.ndarray, margin: float, alpha: float, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = 0) -> TestOutcome:
    """Paired percentile bootstrap: interval = quantiles α and 1 − α of the resampled means (linear,
    as scipy's), p = (1 + #{ḡ* ≥ −m})/(1 + B), each resample's ḡ* + m summed exactly in
    :func:`margin_units` (the same count whatever the other metrics of the run)."""
    values = np.asarray(gain, dtype=np.float64)
    n = values.shape[0]
    units = margin_units(values, margin, terms=n)
    means, above = np.empty((values.shape[1], resamples)), np.zeros(values.shape[1])
    done = 0
    for counts in _bootstrap_counts(n, resamples, seed):
        means[:, done:done + len(counts)] = (counts @ values).T / n
        above += ((counts @ units) >= 0).sum(axis=0)
        done += len(counts)
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=1)
    p = (1 + above) / (1 + resamples)
    return TestOutcome(p, low, high, f"{resamples:,} paired bootstrap resamples (seed {seed})")


def run_test(test: str, gain: np.ndarray, margin: float, alpha: float, seed: int,
             draws: int = RANDOMIZATION_DRAWS, resamples: int = BOOTSTRAP_RESAMPLES) -> TestOutcome:
    """The chosen test on every column of ``gain`` (n queries × m metrics)."""
    if test == "t":
        return t_test(gain, margin, alpha)
    if test == "randomization":
        p, detail = randomization_p(gain, margin, draws, seed)
        interval = t_test(gain, margin, alpha)
        return TestOutcome(p, interval.ci_low, interval.ci_high, detail + "; interval: paired t")
    if test == "bootstrap":
        return bootstrap_test(gain, margin, alpha, resamples, seed)
    raise ValueError(f"unknown test {test!r}")


def adjust(p: Sequence[float] | np.ndarray, correction: str, alpha: float) -> np.ndarray:
    """Family-adjusted p-values, or p itself for none: statsmodels ``multipletests`` (holm, fdr_bh) step
    by step — the same numpy operations, so the same bits (tests/compare/test_paired.py checks it) —
    without importing statsmodels, which with pandas costs ~0.5 s of every ``compare``. On the p-values
    sorted ascending, p_(1) ≤ … ≤ p_(m): Holm p_(i)·(m − i + 1), running maximum upward; Benjamini–
    Hochberg p_(i)/(i/m), running minimum downward; both capped at 1 and put back in input order.
    ``alpha`` does not enter these adjusted values (only multipletests' reject flags, not used here)."""
    values = np.asarray(p, dtype=np.float64)
    method = CORRECTIONS[correction]
    if method is None or len(values) == 1:
        return values.copy()
    order = np.argsort(values)
    ranked = np.take(values, order)
    m = len(ranked)
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:
        adjusted = np.minimum.accumulate((ranked / (np.arange(1, m + 1) / float(m)))[::-1])[::-1]
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def decide(p_adjusted: float, low: float, high: float, margin: float, alpha: float, scale: float = 0.0) -> str:
    """In gain units: regression when the adjusted one-sided test rejects and the interval lies below
    −m; no regression when the interval's lower end is at or above −m (a drop of exactly the margin
    is within it); otherwise inconclusive. The ends meet −m in :func:`margin_units` at ``scale``
    (the column's largest |gain|): a last-bit difference from the margin is none."""
    ends = margin_units(np.array([[low], [high], [scale]]), margin)[:, 0]
    if p_adjusted <= alpha and ends[1] < 0:
        return "regression"
    if ends[0] >= 0:
        return "no regression"
    return "inconclusive"


def effect_size(diff: np.ndarray) -> np.ndarray:
    """d_z = mean(d)/sd(d) (sd with n − 1) per column; NaN where every difference is the same."""
    sd = diff.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, diff.mean(axis=0) / np.where(sd > 0, sd, 1.0), np.nan)
