"""Anytime-valid bounds for the mean paired gain: confidence sequences and their e-processes.

Every function reads the gains g_1, …, g_n of one metric in the order they were observed (new − base,
signed so that higher is better). At each look t the one-sided (1 − α) lower bound L_t and upper
bound U_t hold *simultaneously for every t* (Ville's inequality), so the gate may be watched after
every query and stopped whenever it likes; the two together form a 1 − 2α confidence sequence.

**Asymptotic** (any metric; Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central
limit theory and asymptotic confidence sequences", Ann. Statist. 2024, the Gaussian-mixture AsympCS
in its one-sided form). With σ̂_t the standard deviation of the first t gains, the standardised sum
S_t(m) = Σ_{i≤t} (g_i − m)/σ̂_t and a N(0, ρ²) mixture over λ ≥ 0 (Howard, Ramdas, McAuliffe &
Sekhon 2021, Prop. 6, one-sided normal mixture)

    M_t(m) = 2/√(1 + tρ²) · exp(ρ²S²/(2(1 + tρ²))) · Φ(ρS/√(1 + tρ²)),

and L_t = the m with M_t(m) = 1/α (U_t mirrored). ρ² = (−2 log α + log(1 − 2 log α))/t* makes the
bound tightest near t* looks (their eq. for the optimal ρ). The guarantee is asymptotic: looks start
after ``burn_in`` queries. While every gain so far is the same (σ̂ = 0) the bound is that value, as
the fixed paired t-test treats a constant column.

**Betting** (known bounds [a, b]; Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024, the hedged capital process with the predictable plug-in bet).
On x = (g − a)/(b − a) ∈ [0, 1], with μ̂_i = (1/2 + Σ_{j≤i} x_j)/(i + 1) and
σ̂²_i = (1/4 + Σ_{j≤i} (x_j − μ̂_j)²)/(i + 1),

    λ_i = √(2 log(1/α)/(σ̂²_{i−1} · i · log(1 + i))),   K⁺_t(m) = Π_{i≤t} (1 + min(λ_i, c/m)(x_i − m)),

c = 1/2; L_t is the smallest grid value m with K⁺_t(m) < 1/α, and U_t mirrors it with
K⁻_t(m) = Π (1 − min(λ_i, c/(1 − m))(x_i − m)). The bound is exact in finite samples.

Bounds are intersected over time (running maximum of L, minimum of U), which keeps the guarantee.

**e-values.** For H0: E[g] ≥ −margin (no regression) the e-process is the mixture or capital
against the upper side at the null's nearest value (inf over the null on the betting grid), and for
H0: E[g] ≤ −margin the lower side's. :func:`e_holm` combines a family of e-values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

BET_CAP = 0.5  # c in λ⁺ = min(λ, c/m): at most half the capital at stake (Waudby-Smith & Ramdas' default)
GRID = 1000  # candidate means of the betting bounds (x-scale, as confseq's betting_cs "breaks")
SEQUENCES = ("asymptotic", "betting")
E_CAP = math.exp(700.0)  # e-values are capped here (finite in JSON; far beyond any 1/α)


@dataclass(frozen=True)
class Bounds:
    """Per look t = 1 … n (arrays of length n): the running one-sided bounds of the mean gain, NaN
    before the first look, and the two e-processes for the margin's null hypotheses."""

    lower: np.ndarray
    upper: np.ndarray
    e_regression: np.ndarray  # evidence against E[g] ≥ −margin (large: a regression)
    e_no_regression: np.ndarray  # evidence against E[g] ≤ −margin (large: no regression)


def optimal_rho2(alpha: float, t_star: float) -> float:
    """ρ² = (−2 log α + log(1 − 2 log α))/t*: the mixture variance tightest near t* looks."""
    la = -2.0 * math.log(alpha)
    return (la + math.log(1.0 + la)) / max(t_star, 1.0)


def _log_mixture(s: np.ndarray, t: np.ndarray, rho2: float) -> np.ndarray:
    """log M_t for standardised sums ``s`` at looks ``t`` (one-sided normal mixture)."""
    from scipy.special import log_ndtr

    v = 1.0 + t * rho2
    return math.log(2.0) - 0.5 * np.log(v) + rho2 * s * s / (2.0 * v) + log_ndtr(math.sqrt(rho2) * s / np.sqrt(v))


def _mixture_radius(t: np.ndarray, alpha: float, rho2: float) -> np.ndarray:
    """The standardised sum s* > 0 with M_t(s*) = 1/α at looks 1 … len(t) (cached: it depends on n, α, ρ² only)."""
    return _radius_at(len(t), alpha, rho2)[: len(t)] if np.array_equal(t, np.arange(1, len(t) + 1)) \
        else _solve_radius(np.asarray(t, dtype=np.float64), alpha, rho2)


@lru_cache(maxsize=64)
def _radius_at(n: int, alpha: float, rho2: float) -> np.ndarray:
    radius = _solve_radius(np.arange(1, n + 1, dtype=np.float64), alpha, rho2)
    radius.flags.writeable = False
    return radius


def _solve_radius(t: np.ndarray, alpha: float, rho2: float) -> np.ndarray:
    """Bisection for s* (M_t increases with s)."""
    target = -math.log(alpha)
    low, high = np.zeros_like(t, dtype=np.float64), np.full_like(t, 1.0, dtype=np.float64)
    while True:  # grow the bracket until every look's upper end is above the target
        short = _log_mixture(high, t, rho2) < target
        if not short.any():
            break
        high = np.where(short, high * 2.0, high)
    for _ in range(80):
        mid = 0.5 * (low + high)
        above = _log_mixture(mid, t, rho2) >= target
        high, low = np.where(above, mid, high), np.where(above, low, mid)
    return high


def asymptotic(gains: np.ndarray, alpha: float, margin: float, t_star: float, burn_in: int) -> Bounds:
    """Gaussian-mixture AsympCS bounds and e-processes of the running mean gain (module docstring)."""
    g = np.asarray(gains, dtype=np.float64)
    n = len(g)
    t = np.arange(1, n + 1, dtype=np.float64)
    mean = np.cumsum(g) / t
    var = np.maximum(np.cumsum(g * g) / t - mean * mean, 0.0)  # σ̂²_t with 1/t, as the paper
    sd = np.sqrt(var)
    rho2 = optimal_rho2(alpha, t_star)
    radius = _mixture_radius(t, alpha, rho2) * sd / t  # s*·σ̂_t/t in gain units
    live = t >= burn_in
    lower = np.where(live, mean - radius, np.nan)
    upper = np.where(live, mean + radius, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_below = t * (-margin - mean) / sd  # Σ(m0 − g)/σ̂: evidence of a drop
    # σ̂ = 0 (every gain so far the same): the bound is the mean itself, as the fixed t-test treats a
    # constant column; its e-values are then 0 or unbounded by the side of the margin the mean is on.
    flat = np.where(sd > 0, 0.0, np.sign(-margin - mean))
    s_below = np.where(sd > 0, s_below, 0.0)
    e_reg = np.where(flat > 0, E_CAP, np.where(flat < 0, 0.0, np.exp(np.minimum(_log_mixture(s_below, t, rho2), 700.0))))
    e_ok = np.where(flat < 0, E_CAP, np.where(flat > 0, 0.0, np.exp(np.minimum(_log_mixture(-s_below, t, rho2), 700.0))))
    e_reg, e_ok = np.where(live, e_reg, 0.0), np.where(live, e_ok, 0.0)
    return Bounds(*_running(lower, upper), e_reg, e_ok)


def _plug_in_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """λ_i = √(2 log(1/α)/(σ̂²_{i−1}·i·log(1 + i))): predictable (uses x_1 … x_{i−1} only)."""
    n = len(x)
    i = np.arange(1, n + 1, dtype=np.float64)
    mu_hat = (0.5 + np.cumsum(x)) / (i + 1)
    sigma2 = (0.25 + np.cumsum((x - mu_hat) ** 2)) / (i + 1)
    sigma2_before = np.concatenate(([0.25], sigma2[:-1]))
    return np.sqrt(2.0 * math.log(1.0 / alpha) / (sigma2_before * i * np.log1p(i)))


def _log_capital(x: np.ndarray, lam: np.ndarray, grid: np.ndarray, side: int) -> np.ndarray:
    """(n, G) log K^±_t(m) over the grid of candidate means m (side +1: K⁺, −1: K⁻)."""
    cap = BET_CAP / (grid if side > 0 else 1.0 - grid)
    # 1 ± λ·(x − m), floored at 1e-300, logged and summed over t, in place in one (n, G) buffer
    # (the same float operations as written out: ±(λ·d) is (±λ)·d, 1 + (−p) is 1 − p)
    out = np.subtract(x[:, None], grid[None, :])
    out *= np.minimum(lam[:, None], cap[None, :])
    if side > 0:
        np.add(1.0, out, out=out)
    else:
        np.subtract(1.0, out, out=out)
    np.maximum(out, 1e-300, out=out)
    np.log(out, out=out)
    return np.cumsum(out, axis=0, out=out)


def betting(gains: np.ndarray, alpha: float, margin: float, low: float, high: float, burn_in: int) -> Bounds:
    """Hedged-capital betting bounds and e-processes for gains known to lie in [low, high]."""
    g = np.asarray(gains, dtype=np.float64)
    if g.size and (g.min() < low - 1e-12 or g.max() > high + 1e-12):
        raise ValueError(f"a gain lies outside the bounds [{low:g}, {high:g}] the betting sequence assumes")
    width = high - low
    x = np.clip((g - low) / width, 0.0, 1.0)
    null = (-margin - low) / width  # the margin on the x scale
    grid = np.unique(np.concatenate((np.linspace(0.0, 1.0, GRID + 1)[1:-1], [null] if 0 < null < 1 else [])))
    lam = _plug_in_bets(x, alpha)
    threshold = math.log(1.0 / alpha)
    n = len(x)
    t = np.arange(1, n + 1)
    live = t >= burn_in
    log_up = _log_capital(x, lam, grid, +1)  # large where the mean is above m: rules out small m
    kept = log_up < threshold
    first = np.where(kept.any(axis=1), kept.argmax(axis=1), len(grid))
    edge = np.concatenate(([0.0], grid, [1.0]))  # the last rejected grid value below the first kept one
    lower = np.where(live, low + width * edge[first], np.nan)
    below, above = np.searchsorted(grid, null, side="right"), np.searchsorted(grid, null, side="left")  # grid sorted
    e_ok = np.where(live, np.exp(np.minimum(log_up[:, :below].min(axis=1, initial=np.inf), 700.0)), 0.0)  # m ≤ null
    del log_up, kept
    log_down = _log_capital(x, lam, grid, -1)  # large where the mean is below m: rules out large m
    kept = log_down < threshold
    last = np.where(kept.any(axis=1), len(grid) - 1 - kept[:, ::-1].argmax(axis=1), -1)
    upper = np.where(live, low + width * edge[last + 2], np.nan)
    e_reg = np.where(live, np.exp(np.minimum(log_down[:, above:].min(axis=1, initial=np.inf), 700.0)), 0.0)  # m ≥ null
    return Bounds(*_running(lower, upper), e_reg, e_ok)


def _running(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running intersection: L_t = max_{s≤t} L_s, U_t = min_{s≤t} U_s (NaN before the first look)."""
    return (np.fmax.accumulate(lower) if lower.size else lower,
            np.fmin.accumulate(upper) if upper.size else upper)


def e_holm_adjusted(e: np.ndarray) -> np.ndarray:
    """e-Holm (closed testing with the arithmetic mean of e-values; Vovk & Wang, "E-values:
    calibration, combination and applications", Ann. Statist. 2021): the adjusted e-value of H_k is
    min over sets I ∋ k of mean_{i∈I} e_i, and H_k is rejected at level α when it is ≥ 1/α. The
    hardest I is k with the j smallest other e-values, for some j."""
    e = np.asarray(e, dtype=np.float64)
    out = np.empty(len(e))
    for k in range(len(e)):
        others = np.sort(np.delete(e, k))
        sums = e[k] + np.concatenate(([0.0], np.cumsum(others)))
        out[k] = (sums / np.arange(1, len(e) + 1)).min()
    return out


def e_holm(e: np.ndarray, alpha: float) -> np.ndarray:
    """Which hypotheses e-Holm rejects at level α."""
    return e_holm_adjusted(e) >= 1.0 / alpha
