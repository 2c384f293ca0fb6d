"""Hand-checked values of the per-sample measures (docs/methods.md#2-per-sample-measures) and the α grid (#3-correlation-analysis)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.measures import sample as m
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


def _one_list(in_k: list[int]) -> float:
    """nDCG of one 0/1 list: :func:`ragdiag.measures.sample.ndcg` on a one-row matrix."""
    return float(m.ndcg(np.array([in_k]), np.array([len(in_k)]), np.array([sum(in_k)]))[0])


def test_ndcg_ideal_uses_the_retrieved_positives():
    assert _one_list([1, 0, 0]) == 1.0  # one positive at the top is ideal for n = 1
    assert _one_list([0, 0, 0]) == 0.0
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert _one_list([0, 1, 1]) == pytest.approx(expected)


def test_ndcg_rows_of_a_padded_matrix_hand_checked():
    # rows: [0,1] (K=2, n=1), [1,1,0] (K=3, n=2), [0,0,0] (K=3, n=0), [0,0,1] padded (K=3, n=1)
    in_k = np.array([[0, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 1]], dtype=np.uint8)
    got = m.ndcg(in_k, np.array([2, 3, 3, 3]), np.array([1, 2, 0, 1]))
    assert got[0] == pytest.approx(1 / math.log2(3)) and got[1] == 1.0 and got[2] == 0.0
    assert got[3] == pytest.approx(1 / math.log2(4))
    assert got[0] == _one_list([0, 1])  # a padded row has the value of its own list


def test_robustness_and_recall_indicator():
    recalls = np.array([0.0, 0.1, 0.3, 0.5, 1.0])
    assert m.robustness_at_k(recalls, 0.1) == 0.8
    assert m.robustness_at_k(recalls, 0.5) == 0.4
    assert m.robustness_at_k(np.array([7 / 10]), 0.7) == 1.0
    assert list(m.recall_indicator(np.array([1, 2]), np.array([3, 3]), 0.5)) == [0, 1]


def test_log_grid_is_the_released_numpy_construction_bit_for_bit():
    # The released analysis: numpy.logspace(1, N, num=N, base=B); 0, 1, B^i and 1 - B^i, sorted.
    powers = np.logspace(1, 350, num=350, base=0.95)
    released = np.sort(np.concatenate([[0.0, 1.0], powers, 1 - powers]))
    grid = parse_alpha_grid("l350^0.95")
    assert grid.dtype == np.float64 and len(grid) == 702
    assert grid.tobytes() == released.tobytes()
    assert grid[0] == 0.0 and grid[-1] == 1.0 and np.all(np.diff(grid) > 0)


def test_linear_grid_is_numpy_arange_end_excluded():
    assert list(parse_alpha_grid("0^1^0.25")) == [0.0, 0.25, 0.5, 0.75]
    grid = parse_alpha_grid("0^1^0.01")
    assert grid.tobytes() == np.arange(0.0, 1.0, 0.01).tobytes() and len(grid) == 100
    assert list(parse_alpha_grid("i0^1^0.25")) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_alpha_grid("i0^1^0.1").tobytes() == np.linspace(0, 1, 11).tobytes()


@pytest.mark.parametrize("bad, message", [
    ("l0^0.5", "N must be at least 1"), ("l10^1.5", "B must lie strictly between 0 and 1"),
    ("0^1", "expected lN^B"), ("1^0^0.1", "a1 must not be below a0"), ("abc", "expected lN^B"),
    ("0^inf^1", "must be finite"), ("0^1^nan", "must be finite"), ("nan^1^0.1", "must be finite"),
    ("0^1^0", "step must be positive"), ("0^1^-0.1", "step must be positive"), ("0^2^0.5", "must lie in [0, 1]"),
    ("0^1^1e-9", "1000000000 values exceed the limit of 100,000"), ("l60000^0.5", "exceed the limit"),
    ("i0^1^0.3", "not a whole number of steps"), ("0.5^0.5^0.1", "the grid is empty"),
])
def test_bad_grids_are_one_clear_line(bad, message):
    with pytest.raises(RagdiagError) as err:
        parse_alpha_grid(bad)
    assert message in str(err.value) and "\n" not in str(err.value) and bad in str(err.value)
