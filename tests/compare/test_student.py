"""compare's t and normal quantiles and paired t p-values (scipy.special) equal scipy.stats' to the bit."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from ragdiag.compare import student

QS = [1e-17, 1e-9, 0.001, 0.01, 0.025, 0.05, 0.1, 0.5, 0.8, 0.9, 0.95, 0.999]
DFS = [1, 2, 5, 29, 299, 9_999, 1.5, 190.3]


@pytest.mark.parametrize("q", QS)
def test_quantiles_equal_scipy_stats(q: float) -> None:
    for df in DFS:
        assert student.t_isf(q, df) == stats.t.isf(q, df)
        assert student.t_ppf(q, df) == stats.t.ppf(q, df)
    assert student.norm_isf(q) == stats.norm.isf(q)
    assert student.norm_ppf(q) == stats.norm.ppf(q)


def _ttest_rel_less(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(stats.ttest_rel(x, np.zeros_like(x), alternative="less", axis=0).pvalue)


def test_t_test_equals_ttest_rel() -> None:
    rng = np.random.default_rng(0)
    for trial in range(200):
        n, m = int(rng.integers(2, 3_000)), int(rng.integers(1, 12))
        x = rng.normal(rng.normal(0, 0.1), rng.uniform(0.01, 1), (n, m))
        if trial % 3 == 0:
            x = np.round(x, 2)  # metric-like values with ties
        assert np.array_equal(student.t_test_less(x), _ttest_rel_less(x), equal_nan=True)


@pytest.mark.parametrize("x", [np.ones((5, 2)), np.zeros((5, 2)), np.array([[1.0, 2.0]]), -0.3 * np.ones((3, 1)),
                               np.array([[1.0, np.nan], [2.0, 3.0], [0.5, 1.0]])])
def test_t_test_edges_equal_ttest_rel(x: np.ndarray) -> None:
    assert np.array_equal(student.t_test_less(x), _ttest_rel_less(x), equal_nan=True)


def test_compare_t_does_not_import_scipy_stats() -> None:
    code = ("import sys, numpy as np; from ragdiag.compare import gate, paired, planning; "
            "paired.t_test(np.random.default_rng(0).normal(size=(50, 3)), 0.01, 0.05); "
            "planning.queries_needed(0.2, 0.05, 0.05, 0.8); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"
