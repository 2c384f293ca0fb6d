"""The gate's statistics equal the libraries' on the same inputs: scipy's ttest_rel and bootstrap,
statsmodels' multipletests and power solver; the exact randomization p equals a brute-force
enumeration of the sign vectors; the sampled one agrees with the exact one."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
import scipy.stats as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from ragdiag.compare import paired as pt
from ragdiag.compare import planning


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_t_test_is_scipy_ttest_rel(margin):
    rng = np.random.default_rng(1)
    base = rng.uniform(0, 1, (80, 4))
    new = base + rng.normal(-0.01, 0.1, (80, 4))
    out = pt.t_test(new - base, margin, 0.05)
    for j in range(4):
        ref = st.ttest_rel(new[:, j] + margin, base[:, j], alternative="less")
        ci = st.ttest_rel(new[:, j], base[:, j]).confidence_interval(confidence_level=0.9)
        assert out.p[j] == pytest.approx(ref.pvalue, rel=1e-10)
        assert (out.ci_low[j], out.ci_high[j]) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_t_test_on_a_constant_difference_is_certain():
    gain = np.full((10, 2), -0.05)
    gain[:, 1] = 0.0
    out = pt.t_test(gain, 0.01, 0.05)
    assert list(out.p) == [0.0, 1.0]
    assert list(out.ci_low) == list(out.ci_high) == pytest.approx([-0.05, 0.0])


@pytest.mark.parametrize(("seed", "alpha"), [(0, 0.05), (7, 0.1)])
def test_bootstrap_is_scipy_bootstrap_with_the_same_seed(seed, alpha):
    rng = np.random.default_rng(2)
    gain = rng.normal(-0.02, 0.2, (120, 3))
    out = pt.bootstrap_test(gain, 0.01, alpha, resamples=999, seed=seed)
    means = pt.bootstrap_means(gain, 999, seed)
    for j in range(3):
        ref = st.bootstrap((gain[:, j],), np.mean, n_resamples=999, method="percentile",
                           confidence_level=1 - 2 * alpha, rng=np.random.default_rng(seed))
        np.testing.assert_allclose(means[j], ref.bootstrap_distribution, rtol=1e-12, atol=1e-14)
        assert (out.ci_low[j], out.ci_high[j]) == pytest.approx(
            (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-12)
        assert out.p[j] == (1 + (ref.bootstrap_distribution >= -0.01).sum()) / 1000


@pytest.mark.parametrize("n", [5, 8, 12])
def test_exact_randomization_equals_brute_force(n):
    rng = np.random.default_rng(n)
    gain = np.round(rng.normal(-0.03, 0.1, (n, 3)), 2)  # rounded: ties with the observed sum occur
    gain[:, 2] = rng.integers(-1, 2, n)  # a discrete metric (hit-like)
    for margin in (0.0, 0.05):
        p, detail = pt.randomization_p(gain, margin)
        assert detail.startswith("exact")
        for j in range(3):
            x = gain[:, j] + margin
            total = x.sum()
            hits = sum(np.dot(signs, x) <= total + 1e-12 for signs in itertools.product((1, -1), repeat=n))
            assert p[j] == hits / 2**n


def test_sampled_randomization_agrees_with_exact(monkeypatch):
    rng = np.random.default_rng(5)
    gain = rng.normal(-0.04, 0.15, (16, 2))
    exact, _ = pt.randomization_p(gain, 0.0)
    monkeypatch.setattr(pt, "EXACT_MAX", 10)
    sampled, detail = pt.randomization_p(gain, 0.0, draws=20_000, seed=3)
    assert "20,000 seeded" in detail
    assert sampled == pytest.approx(exact, abs=0.012)
    again, _ = pt.randomization_p(gain, 0.0, draws=20_000, seed=3)
    assert list(again) == list(sampled)  # same seed, same p


@pytest.mark.parametrize(("correction", "method"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_are_statsmodels_multipletests(correction, method, monkeypatch):
    """Bit for bit, on hand-picked and on random families (ties, values near 0 and 1, 2–12 metrics).
    statsmodels' Holm branch calls ``gc.collect()`` on every call, which walks the whole heap of a
    worker that has run hundreds of tests (seconds each); the collection changes no number, so it is
    skipped here."""
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    p = np.array([0.001, 0.04, 0.03, 0.2, 0.012])
    assert list(pt.adjust(p, correction, 0.05)) == list(multipletests(p, alpha=0.05, method=method)[1])
    assert list(pt.adjust(p, "none", 0.05)) == list(p)
    rng = np.random.default_rng(7)
    for m in range(2, 13):
        for _ in range(40):
            p = rng.choice([rng.uniform(0, 1, m), rng.uniform(0, 1e-6, m), rng.uniform(0.9, 1, m),
                            rng.integers(0, 4, m) / 4.0])
            ours = pt.adjust(p, correction, 0.05)
            assert ours.tobytes() == multipletests(p, alpha=0.05, method=method)[1].tobytes(), p


def test_decisions_read_the_interval_against_the_margin():
    assert pt.decide(0.01, -0.08, -0.03, 0.01, 0.05) == "regression"
    assert pt.decide(0.09, -0.08, -0.03, 0.01, 0.05) == "inconclusive"  # below the margin but not family-significant
    assert pt.decide(0.6, -0.005, 0.02, 0.01, 0.05) == "no regression"
    assert pt.decide(0.2, -0.03, 0.01, 0.01, 0.05) == "inconclusive"


@pytest.mark.parametrize(("sd", "effect", "alpha", "power"), [(0.2, 0.02, 0.05, 0.8), (0.55, 0.1, 0.05, 0.8),
                                                             (0.3, 0.05, 0.01, 0.9), (1.0, 0.5, 0.1, 0.7)])
def test_queries_needed_matches_the_noncentral_t_power(sd, effect, alpha, power):
    n = planning.queries_needed(sd, effect, alpha, power)
    exact = TTestPower().solve_power(effect_size=effect / sd, alpha=alpha, power=power, alternative="larger")
    assert abs(n - exact) <= 2  # Sakai's iterated t-correction against statsmodels' exact solver
    assert planning.power_at_n(sd, effect, n, alpha) >= power - 0.01
    assert planning.power_at_n(sd, effect, n - 2, alpha) < power
    assert planning.mde_at_n(sd, n, alpha, power) <= effect + 1e-12 < planning.mde_at_n(sd, n - 1, alpha, power)


def test_no_finite_n_detects_a_zero_drop():
    assert planning.queries_needed(0.2, 0.0, 0.05, 0.8) is None
