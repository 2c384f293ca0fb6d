"""Hand-checked values of the per-sample measures (METHODS.md §2) and the α grid (§3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.metrics import measures as m
from ragdiag.metrics.alpha_grid import parse_alpha_grid


def test_precision_recall_and_f1():
    n, k, np_ = np.array([2.0]), np.array([4.0]), np.array([3.0])
    assert m.precision(n, k)[0] == 0.5 and m.recall(n, np_)[0] == pytest.approx(2 / 3)
    p, r = 0.5, 2 / 3
    assert m.f_measure(n, k, np_, 0.5)[0] == pytest.approx(2 * p * r / (p + r))  # a = 0.5 is F1
    beta = 2.0  # a = 1/(1+β²) gives F_β
    f_beta = (1 + beta**2) * p * r / (beta**2 * p + r)
    assert m.f_measure(n, k, np_, 1 / (1 + beta**2))[0] == pytest.approx(f_beta)
    assert m.f_measure(n, k, np_, 1.0)[0] == 0.5 and m.f_measure(n, k, np_, 0.0)[0] == pytest.approx(2 / 3)


def test_e_uses_the_estimate_and_t_needs_no_np():
    n, k = np.array([2.0]), np.array([4.0])
    assert m.e_measure(n, k, np.array([3.0]), 0.0)[0] == pytest.approx(2 / (3 + 1e-10))
    assert m.e_measure(np.array([0.0]), k, np.array([0.0]), 0.0)[0] == 0.0
    # T(a) = (1-a)·n − a·nn/K: a = 0 counts positives, a = 1 is minus the share of negatives
    assert m.t_measure(n, k, 0.0)[0] == 2.0 and m.t_measure(n, k, 1.0)[0] == -0.5
    assert m.t_measure(n, k, 0.25)[0] == pytest.approx(0.75 * 2 - 0.25 * 2 / 4)


def test_ndcg_ideal_uses_the_retrieved_positives():
    assert m.ndcg_from_in_k([1, 0, 0]) == 1.0  # one positive at the top is ideal for n = 1
    assert m.ndcg_from_in_k([0, 0, 0]) == 0.0
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert m.ndcg_from_in_k([0, 1, 1]) == pytest.approx(expected)


def test_robustness_and_recall_indicator():
    recalls = np.array([0.0, 0.1, 0.3, 0.5, 1.0])
    assert m.robustness_at_k(recalls, 0.1) == 0.8
    assert m.robustness_at_k(recalls, 0.5) == 0.4
    assert m.robustness_at_k(np.array([7 / 10]), 0.7) == 1.0
    assert list(m.recall_indicator(np.array([1, 2]), np.array([3, 3]), 0.5)) == [0, 1]


def test_alpha_grids():
    grid = parse_alpha_grid("l350^0.95")
    assert len(grid) == 702 and grid[0] == 0.0 and grid[-1] == 1.0
    assert 0.95 in grid and (1 - 0.95**350) in grid and np.all(np.diff(grid) > 0)
    assert list(parse_alpha_grid("0^1^0.25")) == [0.0, 0.25, 0.5, 0.75, 1.0]
    for bad in ("l0^0.5", "l10^1.5", "0^1", "1^0^0.1", "abc"):
        with pytest.raises(RagdiagError):
            parse_alpha_grid(bad)
