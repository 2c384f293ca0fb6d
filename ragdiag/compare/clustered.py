"""Paired tests when queries come in groups (several questions from one document): the unit of
independence is the cluster, not the query (Miller, "Adding Error Bars to Evals", 2024, §3).

With gains g_i (one column per metric), clusters c(i) ∈ {1 … G} and the margin m:

- **t, cluster-robust (CR1)**: ḡ ± t_{1−α, G−1} · SE with
  SE² = G/(G − 1) · Σ_c (Σ_{i∈c} (g_i − ḡ))² / n² — the sandwich variance of OLS
  of g on a constant with cluster-robust covariance (Liang & Zeger 1986; Cameron & Miller 2015), as
  ``statsmodels`` ``OLS(g, 1).fit(cov_type="cluster", cov_kwds={"groups": c})`` computes it (its
  small-sample factor G/(G − 1)·(n − 1)/(n − k), k = 1, and t with G − 1 degrees of freedom);
  p = P(T_{G−1} ≤ (ḡ + m)/SE);
- **cluster bootstrap**: G clusters drawn with replacement (seeded), the mean gain of the items they
  hold; interval = the α and 1 − α quantiles, p = (1 + #{ḡ* ≥ −m})/(1 + B);
- **cluster sign-flip randomization**: under H0 each cluster's shifted total Σ_{i∈c}(g_i + m) is
  symmetric about 0, so whole clusters flip sign together: exact over the 2^G vectors for G ≤ 20,
  else ``draws`` seeded vectors, p = (1 + #{T* ≤ T})/(1 + draws); its interval is the CR1 one.

Methods: docs/methods.md#sequential-gate-and-clustered-errors-compare.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragdiag.compare import paired as pt
from ragdiag.errors import RagdiagError


def cluster_index(labels: list[Any]) -> np.ndarray:
    """Cluster labels → 0 … G − 1 in order of first appearance."""
    seen: dict[Any, int] = {}
    return np.array([seen.setdefault(label, len(seen)) for label in labels], dtype=np.int64)


def check_clusters(groups: np.ndarray, source: str) -> None:
    """At least two clusters, and not every cluster a single query (then clustering changes nothing)."""
    sizes = np.bincount(groups)
    if len(sizes) < 2:
        raise RagdiagError(f"{source}: every query is in the same cluster; cluster-robust errors need at least 2 clusters "
                           "(check the column, or leave out --cluster-col / --cluster-by)")
    if sizes.max() == 1:
        raise RagdiagError(f"{source}: every cluster holds one query, so clustering changes nothing; "
                           "leave out --cluster-col / --cluster-by (or name the column that groups the questions)")


def _cluster_sums(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(G, m) per-cluster column sums."""
    out = np.zeros((int(groups.max()) + 1, values.shape[1]))
    np.add.at(out, groups, values)
    return out


def cr1_se(gain: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """CR1 standard error of each column's mean (statsmodels' cluster covariance of OLS on a constant)."""
    n = gain.shape[0]
    g_count = int(groups.max()) + 1
    scores = _cluster_sums(gain - gain.mean(axis=0), groups)
    return np.sqrt(g_count / (g_count - 1) * (scores**2).sum(axis=0)) / n


def t_test(gain: np.ndarray, groups: np.ndarray, margin: float, alpha: float) -> pt.TestOutcome:
    from scipy.stats import t as student

    gain = np.asarray(gain, dtype=np.float64)
    df = int(groups.max())  # G − 1
    mean, se = gain.mean(axis=0), cr1_se(gain, groups)
    half = student.ppf(1 - alpha, df) * se
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, student.cdf((mean + margin) / np.where(se > 0, se, 1.0), df),
                     (mean + margin >= 0).astype(np.float64))
    return pt.TestOutcome(np.asarray(p, dtype=np.float64), mean - half, mean + half,
                          f"cluster-robust t (CR1, {df + 1} clusters, t with {df} df)")


def bootstrap_test(gain: np.ndarray, groups: np.ndarray, margin: float, alpha: float,
                   resamples: int = pt.BOOTSTRAP_RESAMPLES, seed: int = 0) -> pt.TestOutcome:
    gain = np.asarray(gain, dtype=np.float64)
    sums = _cluster_sums(gain, groups)
    sizes = np.bincount(groups).astype(np.float64)
    g_count = len(sizes)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, g_count, (resamples, g_count))
    counts = np.zeros((resamples, g_count))
    np.add.at(counts, (np.repeat(np.arange(resamples), g_count), picks.ravel()), 1.0)
    means = (counts @ sums) / (counts @ sizes)[:, None]  # (B, m): the mean gain of the drawn clusters' items
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=0)
    p = (1 + (means >= -margin).sum(axis=0)) / (1 + resamples)
    return pt.TestOutcome(p, low, high, f"{resamples:,} cluster bootstrap resamples of {g_count} clusters (seed {seed})")


def randomization_test(gain: np.ndarray, groups: np.ndarray, margin: float, alpha: float,
                       draws: int = pt.RANDOMIZATION_DRAWS, seed: int = 0) -> pt.TestOutcome:
    totals = _cluster_sums(np.asarray(gain, dtype=np.float64) + margin, groups)  # (G, m)
    p, detail = pt.randomization_p(totals - margin, margin, draws, seed)  # flips whole clusters' shifted totals
    interval = t_test(gain, groups, margin, alpha)
    return pt.TestOutcome(p, interval.ci_low, interval.ci_high,
                          detail.replace("sign vectors", "cluster sign vectors").replace("sign-flip draws", "cluster sign-flip draws")
                          + "; interval: cluster-robust t")


def run_test(test: str, gain: np.ndarray, groups: np.ndarray, margin: float, alpha: float, seed: int,
             draws: int = pt.RANDOMIZATION_DRAWS, resamples: int = pt.BOOTSTRAP_RESAMPLES) -> pt.TestOutcome:
    """The chosen test with clusters (``groups``: each row's cluster 0 … G − 1)."""
    if test == "t":
        return t_test(gain, groups, margin, alpha)
    if test == "randomization":
        return randomization_test(gain, groups, margin, alpha, draws, seed)
    if test == "bootstrap":
        return bootstrap_test(gain, groups, margin, alpha, resamples, seed)
    raise ValueError(f"unknown test {test!r}")
