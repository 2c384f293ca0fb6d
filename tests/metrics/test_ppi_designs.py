"""Stratified PPI++ and active (IPW) PPI++ (issue 43): equal to ``ppi_py`` where it computes the same
estimator, equal to an independent per-item weighted computation elsewhere, unbiased and narrower than a
uniform draw where the judge's quality varies (seeded simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from ragdiag.metrics.ppi_designs import (
    active_classical_mean,
    active_ppi_mean,
    sampling_probabilities,
    stratified_classical_mean,
    stratified_parts,
    stratified_ppi_mean,
)

ppi_py = pytest.importorskip("ppi_py", reason="ppi_py (calibrate's dependency) is not installed")


def _sample(seed: int, n: int = 40, big_n: int = 400):
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 6, n + big_n).astype(float)
    yhat = np.clip(y + 0.5 + rng.normal(0, 0.8, len(y)), 1, 5)
    return y[:n], yhat[:n], yhat[n:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_stratum_is_ppi_py_ppi_mean(seed):
    y, yhat, yhat_u = _sample(seed)
    ours = stratified_ppi_mean(y, yhat, yhat_u, np.zeros(len(y)), np.zeros(len(yhat_u)), alpha=0.1)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)
    assert ours == pytest.approx((float(np.ravel(point)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0])),
                                 rel=1e-12)


def test_each_stratum_is_ppi_py_and_the_combination_is_weighted():
    y, yhat, yhat_u = _sample(3, n=60, big_n=600)
    s_lab, s_unl = (np.where(v > 3, "high", "low") for v in (yhat, yhat_u))
    parts = stratified_parts(y, yhat, yhat_u, s_lab, s_unl)
    z = norm.ppf(0.95)
    total = 0.0
    variance = 0.0
    for name, n_lab, n_unl, weight, estimate, var, _ in parts:
        lab, unl = s_lab == name, s_unl == name
        low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y[lab], yhat[lab], yhat_u[unl], alpha=0.1))
        assert estimate == pytest.approx((low + high) / 2, rel=1e-12)
        assert np.sqrt(var) * z == pytest.approx((high - low) / 2, rel=1e-10)
        assert weight == pytest.approx((n_lab + n_unl) / (len(y) + len(yhat_u)))
        total += weight * estimate
        variance += weight**2 * var
    estimate, low, high = stratified_ppi_mean(y, yhat, yhat_u, s_lab, s_unl, alpha=0.1)
    assert estimate == pytest.approx(total) and high - low == pytest.approx(2 * z * np.sqrt(variance))


def test_stratified_classical_is_the_weighted_stratum_means():
    y = np.array([1.0, 2, 3, 4, 5, 5])
    strata = np.array(["a", "a", "a", "b", "b", "b"])
    estimate, low, high = stratified_classical_mean(y, strata, {"a": 0.25, "b": 0.75}, alpha=0.1)
    assert estimate == pytest.approx(0.25 * 2 + 0.75 * 14 / 3)
    var = 0.25**2 * np.var([1, 2, 3]) / 3 + 0.75**2 * np.var([4, 5, 5]) / 3
    assert high - low == pytest.approx(2 * norm.ppf(0.95) * np.sqrt(var))


def test_a_stratum_with_one_label_is_refused():
    with pytest.raises(ValueError, match="stratum 'b' has 1 labelled"):
        stratified_parts(np.array([1.0, 2, 3]), np.array([1.0, 2, 3]), np.array([2.0, 3]),
                         np.array(["a", "a", "b"]), np.array(["a", "b"]))


def _active_by_hand(y_all, yhat_all, labelled, pi, lam):
    """The Zrnic–Candès estimator item by item: θ̂ = mean of λŶ_i + (Y_i − λŶ_i)·ξ_i/π_i, its variance
    the sample variance of those terms over N (written independently of the library's sums)."""
    terms = []
    for i in range(len(yhat_all)):
        term = lam * yhat_all[i]
        if labelled[i]:
            term += (y_all[i] - lam * yhat_all[i]) / pi[i]
        terms.append(term)
    terms = np.array(terms)
    return terms.mean(), terms.var() / len(terms)


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_active_equals_the_item_by_item_weighted_estimator(lam):
    rng = np.random.default_rng(7)
    big_n = 500
    y_all = rng.integers(1, 6, big_n).astype(float)
    yhat_all = np.clip(y_all + rng.normal(0, 1, big_n), 1, 5)
    pi = sampling_probabilities(np.abs(rng.normal(0, 1, big_n)), 60, 0.2)
    labelled = rng.random(big_n) < pi
    estimate, low, high = active_ppi_mean(y_all[labelled], yhat_all[labelled], yhat_all, pi[labelled], 0.1, lam=lam)
    mean, var = _active_by_hand(y_all, yhat_all, labelled, pi, lam)
    assert estimate == pytest.approx(mean, rel=1e-12)
    assert high - low == pytest.approx(2 * norm.ppf(0.95) * np.sqrt(var), rel=1e-9)
    if lam == 0.0:
        assert active_classical_mean(y_all[labelled], pi[labelled], big_n, 0.1) == pytest.approx((estimate, low, high))


def test_active_tuned_lambda_minimises_the_variance():
    rng = np.random.default_rng(8)
    big_n = 800
    y_all = rng.integers(1, 6, big_n).astype(float)
    yhat_all = np.clip(y_all + rng.normal(0, 0.7, big_n), 1, 5)
    pi = np.full(big_n, 0.1)
    labelled = rng.random(big_n) < pi
    args = (y_all[labelled], yhat_all[labelled], yhat_all, pi[labelled], 0.1)
    tuned = active_ppi_mean(*args)
    widths = [active_ppi_mean(*args, lam=lam)[2] - active_ppi_mean(*args, lam=lam)[1] for lam in np.linspace(0, 1, 41)]
    assert tuned[2] - tuned[1] <= min(widths) + 1e-9


def test_everything_labelled_gives_the_plain_mean():
    y = np.array([1.0, 3, 5, 4, 2])
    estimate, low, high = active_ppi_mean(y, y + 0.3, y + 0.3, np.ones(5), 0.1)
    assert estimate == pytest.approx(y.mean())


def test_sampling_probabilities_sum_cap_and_floor():
    u = np.array([0.0, 0.0, 1.0, 1.0, 10.0, 0.5] * 10)
    pi = sampling_probabilities(u, 20, 0.2)
    assert pi.sum() == pytest.approx(20) and pi.max() <= 1 and pi.min() > 0
    assert pi[4] == 1.0 and pi[2] > pi[0]  # the most uncertain capped at 1, the others by uncertainty
    assert sampling_probabilities(u, 20, 1.0) == pytest.approx(np.full(60, 20 / 60))
    with pytest.raises(ValueError):
        sampling_probabilities(u, 61, 0.2)


def _population(rng, big_n):
    """Judge quality varies: 80% of items the judge nails (residual SD 0.15, its repeats agree), 20% it
    guesses (residual SD 1.5, its repeats spread); the judge's uncertainty signal is that SD."""
    hard = rng.random(big_n) < 0.2
    y = rng.normal(3.0, 1.0, big_n)  # the true mean is 3.0
    noise = np.where(hard, 1.5, 0.15)
    yhat = y + 0.4 + rng.normal(0, 1, big_n) * noise
    return y, yhat, hard, noise


def test_active_and_stratified_are_narrower_than_uniform_at_equal_labels():
    """300 seeded runs, N = 2000 items, 100 labels (expected, for active): the mean interval width of
    uniform PPI++, stratified PPI++ (strata = the judge's own uncertainty, Neyman allocation) and
    active IPW PPI++ (π ∝ uncertainty, floor 0.2); coverage of the true mean at α = 0.1 printed."""
    from ragdiag.commands.calibrate_design import _allocate

    runs, big_n, n, alpha = 300, 2000, 100, 0.1
    widths = {"uniform": [], "stratified": [], "active": []}
    hits = dict.fromkeys(widths, 0)
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        y, yhat, hard, noise = _population(rng, big_n)
        truth = 3.0  # the mean of the distribution the items are drawn from (PPI's estimand)
        # uniform
        chosen = rng.choice(big_n, n, replace=False)
        mask = np.zeros(big_n, dtype=bool)
        mask[chosen] = True
        low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y[mask], yhat[mask], yhat[~mask], alpha=alpha))
        results = {"uniform": (low, high)}
        # stratified by the uncertainty signal
        strata = np.where(hard, "far", "agree")
        sizes = {h: int((strata == h).sum()) for h in ("far", "agree")}
        alloc = _allocate(sizes, {"far": 1.5, "agree": 0.15}, n)
        mask = np.zeros(big_n, dtype=bool)
        for h, k in alloc.items():
            mask[rng.choice(np.flatnonzero(strata == h), k, replace=False)] = True
        _, low, high = stratified_ppi_mean(y[mask], yhat[mask], yhat[~mask], strata[mask], strata[~mask], alpha)
        results["stratified"] = (low, high)
        # active
        pi = sampling_probabilities(noise, n, 0.2)
        mask = rng.random(big_n) < pi
        _, low, high = active_ppi_mean(y[mask], yhat[mask], yhat, pi[mask], alpha)
        results["active"] = (low, high)
        for name, (low, high) in results.items():
            widths[name].append(high - low)
            hits[name] += low <= truth <= high
    mean_width = {name: float(np.mean(w)) for name, w in widths.items()}
    print("\n" + " · ".join(f"{name}: mean width {mean_width[name]:.4f}, coverage {hits[name] / runs:.1%}"
                            for name in widths) + f" ({runs} seeded runs, N={big_n}, n={n}, α={alpha})")
    assert mean_width["stratified"] < 0.85 * mean_width["uniform"]
    assert mean_width["active"] < 0.85 * mean_width["uniform"]
    for name in widths:
        assert hits[name] / runs >= 0.85, name
