"""τ-b equals scipy.stats.kendalltau; τ_AP equals a loop written here from Yilmaz, Aslam & Robertson
(SIGIR 2008), on point estimates and on whole bootstrap matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from ragdiag.testset.rank_agreement import kendall_tau_b, tau_ap


def tau_ap_by_definition(estimate: list[float], truth: list[float]) -> float:
    """Yilmaz et al. 2008, eq. 3: order the items by the estimate (best first); for each position
    i = 2..N, p(i) = (items above i that the truth also ranks above item i) / (i − 1);
    τ_AP = 2/(N−1) · Σ p(i) − 1. Ties in the estimate keep the given order."""
    order = sorted(range(len(estimate)), key=lambda s: -estimate[s])  # sorted() is stable
    n, total = len(order), 0.0
    for i in range(1, n):
        current = order[i]
        right = sum(1 for j in range(i) if truth[order[j]] > truth[current])
        total += right / i
    return 2.0 / (n - 1) * total - 1.0


@pytest.mark.parametrize("seed", range(20))
def test_tau_b_equals_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    x = rng.normal(size=n)
    y = x + rng.normal(scale=float(rng.uniform(0.1, 3)), size=n)
    if seed % 2:  # ties on both sides
        x, y = np.round(x), np.round(y * 2) / 2
    expected = kendalltau(x, y).statistic
    got = float(kendall_tau_b(x, y))
    assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


def test_tau_b_on_a_bootstrap_matrix_is_row_by_row():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 8)), rng.normal(size=(50, 8))
    rows = kendall_tau_b(x, y)
    assert rows.shape == (50,)
    assert np.allclose(rows, [kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])


def test_tau_b_is_nan_when_one_side_ties_everything():
    assert math.isnan(float(kendall_tau_b(np.ones(5), np.arange(5.0))))


@pytest.mark.parametrize("seed", range(20))
def test_tau_ap_equals_the_definition(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 20))
    truth = rng.normal(size=n)
    estimate = truth + rng.normal(scale=float(rng.uniform(0.05, 2)), size=n)
    if seed % 3 == 0:
        estimate = np.round(estimate)
    assert float(tau_ap(estimate, truth)) == pytest.approx(tau_ap_by_definition(list(estimate), list(truth)), abs=1e-12)
    batch = np.stack([estimate, truth[::-1]])
    assert np.allclose(tau_ap(batch, np.stack([truth, truth])),
                       [tau_ap_by_definition(list(b), list(truth)) for b in batch])


def test_tau_ap_known_values_and_its_top_weighting():
    truth = [5.0, 4.0, 3.0, 2.0, 1.0]
    assert float(tau_ap(truth, truth)) == 1.0
    assert float(tau_ap(truth[::-1], truth)) == -1.0
    swap_top = [4.0, 5.0, 3.0, 2.0, 1.0]
    swap_bottom = [5.0, 4.0, 3.0, 1.0, 2.0]
    assert float(kendall_tau_b(swap_top, truth)) == float(kendall_tau_b(swap_bottom, truth)) == 0.8
    assert float(tau_ap(swap_top, truth)) == pytest.approx(0.5)  # one swap at the top costs p(2) = 0
    assert float(tau_ap(swap_bottom, truth)) == pytest.approx(1 - 2 / 4 * (1 / 4))
    assert math.isnan(float(tau_ap([1.0, 1.0, 1.0], truth[:3])))
