"""Student t and normal quantiles, and the paired t-test's p-value, from :mod:`scipy.special`.

``scipy.stats`` costs about 1 s to import (its distributions, resampling and the array-API layer),
``scipy.special`` about a third of that; ``compare`` needs four functions of the former, each a
call into the latter. They are computed here as ``scipy.stats`` computes them (scipy 1.17:
``t_gen._ppf``/``_isf``, ``norm_gen._ppf``/``_isf``, ``ttest_1samp`` with ``_SimpleStudentT``);
``tests/compare/test_student.py`` checks them against ``scipy.stats`` value for value.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri, stdtr, stdtrit


def t_ppf(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``: the q-quantile of Student's t with ``df`` degrees of freedom."""
    return float(stdtrit(df, q))


def t_isf(q: float, df: float) -> float:
    """``scipy.stats.t.isf(q, df)`` = −t.ppf(q, df): the upper q-quantile (finite for any q > 0)."""
    return float(-stdtrit(df, q))


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``: the standard normal q-quantile Φ⁻¹(q)."""
    return float(ndtri(q))


def norm_isf(q: float) -> float:
    """``scipy.stats.norm.isf(q)`` = −Φ⁻¹(q)."""
    return float(-ndtri(q))


def t_test_less(x: np.ndarray) -> np.ndarray:
    """Per column of ``x`` (n rows), the lower-tail p-value of the one-sample t-test of mean 0:
    ``scipy.stats.ttest_1samp(x, 0, axis=0, alternative="less").pvalue`` = F_{n−1}(x̄ / √(s²/n)),
    s² = Σ(x − x̄)²/n · n/(n − 1), the columns reduced along the last axis as scipy's axis handling
    moves them; NaN for a column of fewer than 2 rows."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), 0, -1)
    n = x.shape[-1]
    if n < 2:
        return np.full(x.shape[:-1], np.nan)
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean[..., 0], np.sqrt(var / n))
    return np.asarray(stdtr(np.float64(n - 1), t), dtype=np.float64)
