"""How alike two orderings of the same systems are: Kendall's τ-b, Yilmaz et al.'s τ_AP, and both
over bootstrap resamples of the queries.

Every function takes system scores (higher is better) as arrays whose last axis is the systems, so
one call scores a point estimate ``(S,)`` or a whole bootstrap ``(B, S)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kendall_tau_b", "tau_ap"]


def _pair_signs(x: np.ndarray) -> np.ndarray:
    """sign(x_i − x_j) for every pair i < j, last axis = pairs."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    return np.sign(x[..., i] - x[..., j])


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b = (C − D) / √((n₀ − n₁)(n₀ − n₂)), n₀ = S(S−1)/2 pairs, n₁ / n₂ the pairs tied
    in x / in y (Kendall 1945; what ``scipy.stats.kendalltau`` computes by default). NaN where one
    side ties every pair."""
    sx, sy = _pair_signs(np.asarray(x, dtype=np.float64)), _pair_signs(np.asarray(y, dtype=np.float64))
    n0 = sx.shape[-1]
    untied_x = n0 - np.sum(sx == 0, axis=-1)
    untied_y = n0 - np.sum(sy == 0, axis=-1)
    denominator = np.sqrt(untied_x.astype(np.float64) * untied_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, np.sum(sx * sy, axis=-1) / np.where(denominator > 0, denominator, 1.0), np.nan)


def tau_ap(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """τ_AP (Yilmaz, Aslam & Robertson, SIGIR 2008): with the systems ordered by ``estimate`` (best
    first), τ_AP = 2/(S−1) · Σ_{i=2..S} C(i)/(i−1) − 1, C(i) = systems above position i that ``truth``
    also scores strictly above the system at i. A swap near the top costs more than one near the
    bottom; τ_AP is not symmetric (``truth`` is the reference). Ties in ``estimate`` keep the order
    the systems were given in; NaN where ``estimate`` ties every system (no ordering to judge)."""
    est = np.asarray(estimate, dtype=np.float64)
    ref = np.asarray(truth, dtype=np.float64)
    n = est.shape[-1]
    order = np.argsort(-est, axis=-1, kind="stable")
    ranked = np.take_along_axis(ref, order, axis=-1)
    above = ranked[..., None, :] > ranked[..., :, None]  # [.., i, j]: the system at j scores above the one at i
    earlier = np.tril(np.ones((n, n), dtype=bool), k=-1)  # j < i
    correct = np.sum(above & earlier, axis=-1)[..., 1:]
    value = 2.0 / (n - 1) * np.sum(correct / np.arange(1, n), axis=-1) - 1.0
    all_tied = np.all(est == est[..., :1], axis=-1)
    return np.where(all_tied, np.nan, value)
