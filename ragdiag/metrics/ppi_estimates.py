"""Human-anchored estimates (prediction-powered inference) and the judge's uncertainty.

Judge–human agreement is :func:`ragdiag.evaluate.agreement.judge_human_agreement`.

* Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, *Science*
  382:669): with n human grades Y and judge grades Ŷ on the same items and N judge grades Ŷᵘ on the
  rest, the mean is θ̂ = mean(Ŷᵘ) − mean(Ŷ − Y) (the rectifier removes the judge's bias) and the
  OLS coefficients are rectified the same way; ``ppi_py``'s ``ppi_mean_ci`` / ``ppi_ols_ci`` give the
  (1 − α) intervals (power-tuned λ, its default; for the OLS slopes λ is tuned once and given to
  both the estimate and its interval, :func:`ols_lambda`). Next to them: judge-only (the judge's grades taken
  as truth on all items) and human-only (the labelled items alone), both ``ppi_py``'s classical
  intervals, so one sees what the human labels bought.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

MIN_LABELLED = 10  # human grades needed for a PPI interval


@functools.cache
def ppi_with_cached_kernel() -> Any:
    """``ppi_py``, its OLS statistics kernel compiled once per machine instead of once per process.

    ``ppi_py.ppi._ols_get_stats`` (the gradients and inverse Hessian behind ``ppi_ols_pointestimate``,
    ``ppi_ols_ci`` and :func:`ols_lambda`) is ``numba.njit`` without ``cache=True``: every process that
    fits a PPI slope first spends seconds in LLVM (10–25 s CPU on this project's 2-core machine) before
    a millisecond of arithmetic. The same Python function, jitted with numba's on-disk cache
    (``__pycache__`` beside ppi_py's source, else ``NUMBA_CACHE_DIR`` or the user's cache folder), is
    put back under the same name, which ppi_py's functions look up at call time: the same compiled
    code, so the same numbers, loaded from disk after the first run."""
    import numba
    import ppi_py
    from ppi_py import ppi

    ppi._ols_get_stats = numba.njit(cache=True)(ppi._ols_get_stats.py_func)
    return ppi_py


def _interval(low: Any, high: Any, *, index: int = 0) -> list[float]:
    return [float(np.ravel(low)[index]), float(np.ravel(high)[index])]


def mean_estimates(human: np.ndarray, judge_labelled: np.ndarray, judge_unlabelled: np.ndarray,
                   alpha: float) -> dict:
    """Mean grade: PPI (needs ≥ MIN_LABELLED human grades), judge-only and human-only, each with its
    (1 − α) interval; ``None`` for an estimate that cannot be made."""
    import ppi_py

    human, judge_labelled, judge_unlabelled = (np.asarray(a, dtype=np.float64)
                                               for a in (human, judge_labelled, judge_unlabelled))
    judge_all = np.concatenate([judge_labelled, judge_unlabelled])
    out: dict = {"items": int(len(judge_all)), "labelled": int(len(human)), "ppi": None, "human_only": None,
                 "judge_only": None}
    if len(judge_all) >= 2:
        out["judge_only"] = {"estimate": float(judge_all.mean()),
                             "ci": _interval(*ppi_py.classical_mean_ci(judge_all, alpha=alpha))}
    if len(human) >= 2:
        out["human_only"] = {"estimate": float(human.mean()), "ci": _interval(*ppi_py.classical_mean_ci(human, alpha=alpha))}
    if len(human) >= MIN_LABELLED and len(judge_unlabelled) >= 1:
        # a judge that gives one grade everywhere leaves λ undefined (0/0 in its tuning) and any λ gives
        # the same estimate and interval: λ = 1 then
        lam = 1.0 if np.ptp(judge_all) == 0 else None
        args = (human, judge_labelled, judge_unlabelled)
        out["ppi"] = {"estimate": float(np.ravel(ppi_py.ppi_mean_pointestimate(*args, lam=lam))[0]),
                      "ci": _interval(*ppi_py.ppi_mean_ci(*args, alpha=alpha, lam=lam))}
    return out


def slope_estimates(x_labelled: np.ndarray, human: np.ndarray, judge_labelled: np.ndarray, x_unlabelled: np.ndarray,
                    judge_unlabelled: np.ndarray, alpha: float) -> dict:
    """Slope of grade on one measure x (OLS with an intercept): PPI, judge-only and human-only, with
    (1 − α) intervals; ``None`` where x is constant or there are too few items."""
    ppi_py = ppi_with_cached_kernel()

    def design(x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(x)), np.asarray(x, dtype=np.float64)])

    x_all = np.concatenate([x_labelled, x_unlabelled])
    judge_all = np.concatenate([judge_labelled, judge_unlabelled])
    out: dict = {"ppi": None, "human_only": None, "judge_only": None}
    flat = {"estimate": 0.0, "ci": [0.0, 0.0]}  # grades that never change: slope exactly 0, not float noise
    if len(x_all) >= 3 and np.ptp(x_all) > 0:
        out["judge_only"] = dict(flat) if np.ptp(judge_all) == 0 else {
            "estimate": float(np.polyfit(x_all, judge_all, 1)[0]),
            "ci": _interval(*ppi_py.classical_ols_ci(design(x_all), judge_all, alpha=alpha), index=1)}
    if len(x_labelled) >= 3 and np.ptp(x_labelled) > 0:
        out["human_only"] = dict(flat) if np.ptp(human) == 0 else {
            "estimate": float(np.polyfit(x_labelled, human, 1)[0]),
            "ci": _interval(*ppi_py.classical_ols_ci(design(x_labelled), human, alpha=alpha), index=1)}
        if len(x_labelled) >= MIN_LABELLED and len(x_unlabelled) >= 2 and np.ptp(human) == np.ptp(judge_all) == 0:
            out["ppi"] = dict(flat)
        elif len(x_labelled) >= MIN_LABELLED and len(x_unlabelled) >= 2:
            args = (design(x_labelled), np.asarray(human, dtype=np.float64), np.asarray(judge_labelled, dtype=np.float64),
                    design(x_unlabelled), np.asarray(judge_unlabelled, dtype=np.float64))
            lam = ols_lambda(*args)
            out["ppi"] = {"estimate": float(np.ravel(ppi_py.ppi_ols_pointestimate(*args, lam=lam))[1]),
                          "ci": _interval(*ppi_py.ppi_ols_ci(*args, alpha=alpha, lam=lam), index=1)}
    return out


def ols_lambda(x: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_unlabelled: np.ndarray,
               yhat_unlabelled: np.ndarray) -> float:
    """The power-tuning λ of PPI++ OLS (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453), tuned once:
    the variance-minimising λ ∈ [0, 1] (total variance of the coefficients) at the plain PPI estimate
    (λ = 1), as ``ppi_py.ppi_ols_pointestimate`` tunes it. Left to themselves, ``ppi_ols_pointestimate``
    and ``ppi_ols_ci`` tune λ at different θ (the interval re-tunes at the tuned estimate), so the
    estimate printed would not be the centre of its Wald interval; both are given this λ instead.
    Uses ppi_py's own gradient statistics and λ formula (``_ols_get_stats``, ``_calc_lam_glm``)."""
    ppi_py = ppi_with_cached_kernel()
    from ppi_py.ppi import _calc_lam_glm, _ols_get_stats

    theta = np.ravel(ppi_py.ppi_ols_pointestimate(x, y, yhat, x_unlabelled, yhat_unlabelled, lam=1.0))
    stats = _ols_get_stats(theta, x.astype(float), y, yhat, x_unlabelled.astype(float), yhat_unlabelled,
                           w=np.ones(len(y)), w_unlabeled=np.ones(len(yhat_unlabelled)), use_unlabeled=True)
    return float(_calc_lam_glm(*stats, None, clip=True))


def grade_entropy(probs: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of grade probabilities over 1..5 (renormalised)."""
    p = np.asarray(probs, dtype=np.float64)
    p = p / p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
