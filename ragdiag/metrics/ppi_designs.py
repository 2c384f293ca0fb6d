"""Prediction-powered means under a labelling design: stratified PPI++ and active inference.

Plain library functions on numpy arrays (grades, judge predictions, strata, sampling probabilities),
used by ``calibrate`` when its human sheet records how the items were chosen (``--suggest N
--strategy stratified|active``) and open to any other command.

* :func:`stratified_ppi_mean` — stratified PPI++ (Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen
  2024, "Stratified Prediction-Powered Inference for Hybrid Language Model Evaluation", NeurIPS;
  arXiv:2406.04291). In stratum h with n_h labels (Y, Ŷ) and N_h unlabelled predictions Ŷᵘ, the
  PPI++ mean of Angelopoulos, Duchi & Zrnic (2023, arXiv:2311.01453) with its own power-tuning λ_h,
  θ̂_h = λ_h·mean(Ŷᵘ_h) + mean(Y_h − λ_h·Ŷ_h),
  V̂_h = λ_h²·var(Ŷᵘ_h)/N_h + var(Y_h − λ_h·Ŷ_h)/n_h (``ppi_py.ppi_mean_ci``'s variance, ddof 0),
  λ_h = Cov(Y, Ŷ)/((1 + n_h/N_h)·Var(Ŷ)) clipped to [0, 1] (``ppi_py``'s ``_calc_lam_glm``);
  combined θ̂ = Σ_h W_h θ̂_h, V̂ = Σ_h W_h² V̂_h, interval θ̂ ± z_{1−α/2}·√V̂. The weights
  W_h = (n_h + N_h)/(n + N) are each stratum's share of the whole pool (labelled and unlabelled): the
  unlabelled share alone is tilted by unequal sampling rates. With one stratum this is exactly
  ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (tests/metrics/test_ppi_designs.py).
* :func:`active_ppi_mean` — active statistical inference (Zrnic & Candès 2024, "Active Statistical
  Inference", ICML; arXiv:2403.03208), batch setting: every item i of the pool (N items, judge grade
  Ŷ_i) was labelled with probability π_i, independently (ξ_i ~ Bernoulli(π_i)); the estimate
  θ̂ = (1/N)·Σ_i [λ·Ŷ_i + (Y_i − λ·Ŷ_i)·ξ_i/π_i] is unbiased for any λ, its variance is estimated by
  the sample variance of the N terms over N, and λ minimises it: with a_i = Y_i·ξ_i/π_i and
  b_i = Ŷ_i·(1 − ξ_i/π_i), λ = −Cov(a, b)/Var(b) clipped to [0, 1]; λ = 0 is the Horvitz–Thompson
  mean of the labels alone, λ = 1 plain IPW-rectified PPI.
* :func:`sampling_probabilities` — the active design's π: proportional to the judge's uncertainty
  u_i (the SD of its repeated grades, or of its logprob grade distribution, an estimate of
  √E[(Y − Ŷ)² | x], which makes π ∝ u the variance-minimising rule of Zrnic & Candès, Sec. 3), mixed
  with the uniform rule by ``floor``: π_i = n·[(1 − floor)·u_i/Σu + floor/N], capped at 1 with the
  excess spread over the uncapped items so that Σπ = n.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def _lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """PPI++'s power-tuning λ for a mean, as ``ppi_py`` computes it (``_calc_lam_glm`` at the λ = 1
    estimate, clipped to [0, 1]); 1 when the judge never varies (any λ gives the same estimate)."""
    n, big_n = len(y), len(yhat_unlabeled)
    pooled = np.concatenate([yhat, yhat_unlabeled])
    var = float(np.var(pooled, ddof=1)) if len(pooled) > 1 else 0.0
    if var == 0.0:
        return 1.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_mean_with_variance(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray,
                           lam: float | None = None) -> tuple[float, float, float]:
    """PPI++ mean of one sample: (estimate, variance of the estimate, λ), ``ppi_py``'s formulas."""
    y, yhat, yhat_unlabeled = (np.asarray(a, dtype=np.float64) for a in (y, yhat, yhat_unlabeled))
    lam = _lambda(y, yhat, yhat_unlabeled) if lam is None else lam
    estimate = lam * float(yhat_unlabeled.mean()) + float(np.mean(y - lam * yhat))
    variance = lam**2 * float(np.var(yhat_unlabeled)) / len(yhat_unlabeled) + float(np.var(y - lam * yhat)) / len(y)
    return estimate, variance, lam


def _interval(estimate: float, variance: float, alpha: float) -> tuple[float, float, float]:
    half = float(norm.ppf(1 - alpha / 2)) * float(np.sqrt(variance))
    return estimate, estimate - half, estimate + half


def stratified_parts(y_labeled: np.ndarray, yhat_labeled: np.ndarray, yhat_unlabeled: np.ndarray,
                     strata_labeled: np.ndarray, strata_unlabeled: np.ndarray
                     ) -> list[tuple[str, int, int, float, float, float, float]]:
    """Per stratum (sorted by name): (stratum, labelled, unlabelled, weight W_h, θ̂_h, V̂_h, λ_h).
    Raises ValueError for a stratum with fewer than two labels or no unlabelled item."""
    y, yhat, yhat_u = (np.asarray(a, dtype=np.float64) for a in (y_labeled, yhat_labeled, yhat_unlabeled))
    s_lab, s_unl = np.asarray(strata_labeled).astype(str), np.asarray(strata_unlabeled).astype(str)
    total = len(y) + len(yhat_u)
    parts = []
    for stratum in sorted({str(v) for v in s_lab} | {str(v) for v in s_unl}):
        lab, unl = s_lab == stratum, s_unl == stratum
        if lab.sum() < 2:
            raise ValueError(f"stratum {stratum!r} has {int(lab.sum())} labelled item(s); each needs at least 2")
        if unl.sum() < 1:
            raise ValueError(f"stratum {stratum!r} has no unlabelled item")
        estimate, variance, lam = ppi_mean_with_variance(y[lab], yhat[lab], yhat_u[unl])
        parts.append((stratum, int(lab.sum()), int(unl.sum()), float(lab.sum() + unl.sum()) / total, estimate,
                      variance, lam))
    return parts


def stratified_ppi_mean(y_labeled: np.ndarray, yhat_labeled: np.ndarray, yhat_unlabeled: np.ndarray,
                        strata_labeled: np.ndarray, strata_unlabeled: np.ndarray,
                        alpha: float) -> tuple[float, float, float]:
    """Stratified PPI++ mean with per-stratum λ: (estimate, lower, upper) of the (1 − α) interval."""
    parts = stratified_parts(y_labeled, yhat_labeled, yhat_unlabeled, strata_labeled, strata_unlabeled)
    estimate = sum(w * est for _, _, _, w, est, _, _ in parts)
    variance = sum(w**2 * var for _, _, _, w, _, var, _ in parts)
    return _interval(float(estimate), float(variance), alpha)


def stratified_classical_mean(y_labeled: np.ndarray, strata_labeled: np.ndarray, weights: dict[str, float],
                              alpha: float) -> tuple[float, float, float]:
    """The labels alone, stratified: Σ W_h·Ȳ_h with variance Σ W_h²·var(Y_h)/n_h (ddof 0, as ``ppi_py``)."""
    y, strata = np.asarray(y_labeled, dtype=np.float64), np.asarray(strata_labeled).astype(str)
    estimate = sum(w * float(y[strata == h].mean()) for h, w in weights.items())
    variance = sum(w**2 * float(np.var(y[strata == h])) / int((strata == h).sum()) for h, w in weights.items())
    return _interval(float(estimate), float(variance), alpha)


def _moments(y: np.ndarray, yhat: np.ndarray, pi: np.ndarray, yhat_all: np.ndarray
             ) -> tuple[float, float, float, float, float]:
    """Over the pool's N terms a_i = Y_i·ξ_i/π_i and b_i = Ŷ_i·(1 − ξ_i/π_i): mean(a), mean(b),
    Var(a), Var(b), Cov(a, b) (ddof 0), from sums (an unlabelled item has a_i = 0 and b_i = Ŷ_i)."""
    big_n = len(yhat_all)
    w = 1 / pi
    s_a, s_aa = float(np.sum(y * w)), float(np.sum((y * w) ** 2))
    s_b = float(yhat_all.sum() - np.sum(yhat * w))
    s_bb = float(np.sum(yhat_all**2) - np.sum(yhat**2) + np.sum((yhat * (1 - w)) ** 2))
    s_ab = float(np.sum(y * w * yhat * (1 - w)))
    mean_a, mean_b = s_a / big_n, s_b / big_n
    return (mean_a, mean_b, s_aa / big_n - mean_a**2, s_bb / big_n - mean_b**2, s_ab / big_n - mean_a * mean_b)


def active_ppi_mean(y_labeled: np.ndarray, yhat_labeled: np.ndarray, yhat_all: np.ndarray,
                    pi_labeled: np.ndarray, alpha: float, lam: float | None = None) -> tuple[float, float, float]:
    """Active-sampling (inverse-probability-weighted) PPI++ mean: (estimate, lower, upper).

    ``yhat_all``: the judge grades of the whole pool, labelled items included (N values);
    ``y_labeled``, ``yhat_labeled``, ``pi_labeled``: the labelled items' human grade, judge grade and
    the probability with which each was sampled (0 < π ≤ 1). ``lam`` None tunes λ (module docstring)."""
    y, yhat, pi, pool = (np.asarray(a, dtype=np.float64) for a in (y_labeled, yhat_labeled, pi_labeled, yhat_all))
    if np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError("sampling probabilities must lie in (0, 1]")
    mean_a, mean_b, var_a, var_b, cov = _moments(y, yhat, pi, pool)
    if lam is None:
        lam = 1.0 if var_b <= 0 else float(np.clip(-cov / var_b, 0.0, 1.0))
    variance = max(var_a + lam**2 * var_b + 2 * lam * cov, 0.0) / len(pool)
    return _interval(mean_a + lam * mean_b, variance, alpha)


def active_classical_mean(y_labeled: np.ndarray, pi_labeled: np.ndarray, pool: int,
                          alpha: float) -> tuple[float, float, float]:
    """The labels alone under the active design: the Horvitz–Thompson mean (active_ppi_mean at λ = 0)."""
    y = np.asarray(y_labeled, dtype=np.float64)
    terms = np.concatenate([np.zeros(pool - len(y)), y / np.asarray(pi_labeled, dtype=np.float64)])
    return _interval(float(terms.mean()), float(np.var(terms)) / pool, alpha)


def sampling_probabilities(uncertainty: np.ndarray, n_expected: float, floor: float) -> np.ndarray:
    """π_i ∝ uncertainty mixed with uniform by ``floor`` ∈ [0, 1], capped at 1, Σπ = ``n_expected``
    (≤ the pool's size). All-zero uncertainty gives the uniform π = n/N."""
    u = np.asarray(uncertainty, dtype=np.float64)
    big_n = len(u)
    if not 0 < n_expected <= big_n:
        raise ValueError(f"n_expected must be in (0, {big_n}], got {n_expected}")
    if not 0 <= floor <= 1:
        raise ValueError(f"floor must be in [0, 1], got {floor}")
    if np.any(u < 0) or not np.all(np.isfinite(u)):
        raise ValueError("uncertainty must be finite and non-negative")
    share = u / u.sum() if u.sum() > 0 else np.full(big_n, 1 / big_n)
    score = (1 - floor) * share + floor / big_n
    pi = np.zeros(big_n)
    capped = np.zeros(big_n, dtype=bool)
    while True:  # water-filling: items at 1 are fixed, the rest share what is left in proportion to score
        left = n_expected - capped.sum()
        free = ~capped
        pi[free] = left * score[free] / score[free].sum()
        pi[capped] = 1.0
        over = free & (pi >= 1)
        if not over.any():
            return pi
        capped |= over
