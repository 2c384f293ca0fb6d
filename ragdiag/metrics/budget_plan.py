"""Where the next dollar buys the most certainty: questions, judge repeats or human labels (PPI++).

The estimand is the mean human grade. A design has n graded questions (items), each graded r times by
the judge (its judge grade Ŷ is the mean of the r grades), and m ≤ n of them also carry a human grade
Y; the other N = n − m are judge-only. The pilot's variance components, method of moments (one-way
random effects; Searle, Casella & McCulloch 1992, *Variance Components*, §3.5):

* judge-repeat variance σ²_rep = Σᵢ Σⱼ (gᵢⱼ − ḡᵢ)² / Σᵢ (rᵢ − 1), pooled over items with ≥ 2 repeats;
* between-question variance of the judge σ²_J = Var(ḡᵢ) − mean(σ²_rep / rᵢ), raised to c²/σ²_Y when
  below (the covariance matrix of Y and the judge's noise-free grade is positive semi-definite), so that
  Var(Ŷ) = v_r = σ²_J + σ²_rep / r for a judge grade that averages r repeats;
* human variance σ²_Y = Var(Y) and judge–human covariance c = Cov(Y, Ŷ) on the labelled items
  (repeat noise is independent of Y, so c does not depend on r).

PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453, eq. for the mean) has the asymptotic
variance V(λ) = Var(Y − λŶ)/m + λ²·v_r/N with Var(Y − λŶ) = σ²_Y − 2λc + λ²v_r, minimised at
λ* = clip(c / ((1 + m/N)·v_r), 0, 1) (ppi_py's power tuning); the residual variance after λ* is
Var(Y − λ*Ŷ). With N ≫ m, V ≈ σ²_Y(1 − R²)/m, R² = c²/(σ²_Y v_r): the power analysis for PPI (the
labels needed shrink by the factor 1 − R² between judge and human). The predicted (1 − α) interval
width is 2·z₁₋α/₂·√V.

Cost of spending on top of a pilot with n₀ questions, r₀ repeats and m₀ labels: a new question costs
one answer-generation call and r judge calls, raising the repeats to r costs n₀·(r − r₀) calls, a
label costs the human price: cost = p_call·(Δn·(1 + r) + n₀·(r − r₀)) + p_human·Δm.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

MIN_LABELLED = 10  # as ragdiag.metrics.ppi_estimates: a PPI interval needs 10 human grades
MAX_REPEATS = 20  # repeats searched: 1 .. MAX_REPEATS (above r₀)
MAX_LABEL_STEPS = 1_000_000  # new-label counts searched exhaustively up to this many


@dataclass(frozen=True)
class Components:
    """The pilot's variance components (see the module docstring)."""

    between_question: float  # σ²_J
    judge_repeat: float | None  # σ²_rep; None when no item has ≥ 2 repeats
    human: float  # σ²_Y
    covariance: float  # c = Cov(Y, Ŷ)


@dataclass(frozen=True)
class Pilot:
    """What the pilot already holds: questions n₀, repeats r₀ (fewest over items), labels m₀."""

    questions: int
    repeats: int
    labels: int


@dataclass(frozen=True)
class Allocation:
    """A design on top of the pilot: new questions Δn, repeats r per question, new labels Δm."""

    new_questions: int
    repeats: int
    new_labels: int


def repeat_stats(repeats: list[list[float]]) -> np.ndarray:
    """Per item: Σⱼ (gᵢⱼ − ḡᵢ)², its degrees of freedom rᵢ − 1 and rᵢ (rows of a 3-column array)."""
    out = np.zeros((len(repeats), 3))
    for i, r in enumerate(repeats):
        g = np.asarray(r, dtype=np.float64)
        out[i] = (((g - g.mean()) ** 2).sum(), len(g) - 1, len(g)) if len(g) else (0.0, 0.0, 1.0)
    return out


def components(repeats: list[list[float]] | np.ndarray, judge: np.ndarray, human: np.ndarray,
               judge_labelled: np.ndarray) -> Components:
    """Method-of-moments variance components from the pilot: ``repeats`` the repeated judge grades of
    every item (or their :func:`repeat_stats`), ``judge`` every item's judge grade, ``human`` /
    ``judge_labelled`` the labelled items."""
    stats = repeats if isinstance(repeats, np.ndarray) else repeat_stats(repeats)
    multi = stats[:, 1] >= 1
    rep = float(stats[multi, 0].sum() / stats[multi, 1].sum()) if multi.any() else None
    noise = float(np.mean(rep / stats[:, 2])) if rep is not None else 0.0
    cov = float(np.cov(human, judge_labelled, ddof=1)[0, 1])
    var_human = float(np.var(human, ddof=1))
    floor = cov**2 / var_human if var_human > 0 else 0.0  # Cov(Y, J)² ≤ Var(Y)·Var(J): keep it a covariance
    between = max(float(np.var(judge, ddof=1)) - noise, floor)
    return Components(between, rep, var_human, cov)


def judge_variance(comp: Components, repeats: int) -> float:
    """v_r = σ²_J + σ²_rep / r (σ²_rep unknown counts as 0: repeats then buy nothing)."""
    return comp.between_question + (comp.judge_repeat or 0.0) / repeats


def ppi_variance(comp: Components, questions: np.ndarray | int, repeats: int,
                 labels: np.ndarray | int) -> np.ndarray:
    """Asymptotic PPI++ variance of the mean with the optimal λ (module docstring); inf where the
    design has fewer than MIN_LABELLED labels or no judge-only question."""
    n, m = np.asarray(questions, dtype=np.float64), np.asarray(labels, dtype=np.float64)
    unlabelled = n - m
    v = judge_variance(comp, repeats)
    ok = (m >= MIN_LABELLED) & (unlabelled >= 1)
    m_safe, u_safe = np.where(ok, m, 1.0), np.where(ok, unlabelled, 1.0)
    lam = np.clip(comp.covariance / ((1 + m_safe / u_safe) * v), 0.0, 1.0) if v > 0 else np.zeros_like(m_safe)
    residual = comp.human - 2 * lam * comp.covariance + lam**2 * v
    return np.where(ok, residual / m_safe + lam**2 * v / u_safe, np.inf)


def residual_variance(comp: Components, pilot: Pilot) -> float:
    """Var(Y − λ*Ŷ) at the pilot's own design: the judge–human residual after PPI++'s λ."""
    v = judge_variance(comp, pilot.repeats)
    unlabelled = max(pilot.questions - pilot.labels, 1)
    lam = float(np.clip(comp.covariance / ((1 + pilot.labels / unlabelled) * v), 0, 1)) if v > 0 else 0.0
    return comp.human - 2 * lam * comp.covariance + lam**2 * v


def r_squared(comp: Components, repeats: int) -> float:
    """R² = c² / (σ²_Y · v_r) between judge and human (the PPI gain: labels needed × (1 − R²))."""
    v = judge_variance(comp, repeats)
    return comp.covariance**2 / (comp.human * v) if comp.human > 0 and v > 0 else 0.0


def width(comp: Components, pilot: Pilot, alloc: Allocation, alpha: float) -> float:
    """Predicted (1 − α) interval width 2·z₁₋α/₂·√V of the design ``pilot + alloc``."""
    v = ppi_variance(comp, pilot.questions + alloc.new_questions, alloc.repeats, pilot.labels + alloc.new_labels)
    return float(2 * NormalDist().inv_cdf(1 - alpha / 2) * np.sqrt(v))


def cost(pilot: Pilot, alloc: Allocation, price_call: float, price_human: float) -> float:
    """p_call·(Δn·(1 + r) + n₀·(r − r₀)) + p_human·Δm."""
    calls = alloc.new_questions * (1 + alloc.repeats) + pilot.questions * (alloc.repeats - pilot.repeats)
    return price_call * calls + price_human * alloc.new_labels


def _repeat_range(comp: Components, pilot: Pilot) -> range:
    return range(pilot.repeats, pilot.repeats + (MAX_REPEATS if comp.judge_repeat else 1))


def best_for_budget(comp: Components, pilot: Pilot, budget: float, price_call: float,
                    price_human: float) -> Allocation | None:
    """The allocation of at most ``budget`` with the narrowest predicted width, or None if none makes a
    PPI design. Search: every repeat count r from r₀ (to r₀ + 19; only r₀ without repeat variance),
    every new-label count Δm from 0 to the most affordable (≤ 10⁶), and for each the most new questions
    the rest buys (the width never grows with more questions, so the largest affordable Δn is best),
    labels never more than the questions; ties go to the cheaper design."""
    best: tuple[float, float, Allocation] | None = None
    for r in _repeat_range(comp, pilot):
        fixed = price_call * pilot.questions * (r - pilot.repeats)
        if fixed > budget:
            break
        steps = min(int((budget - fixed) // price_human), MAX_LABEL_STEPS)
        dm = np.arange(steps + 1)
        dn = np.floor((budget - fixed - price_human * dm) / (price_call * (1 + r)) + 1e-9).astype(np.int64)
        labels, n = pilot.labels + dm, pilot.questions + dn
        var = np.where(labels <= n, ppi_variance(comp, n, r, labels), np.inf)  # a label needs a graded question
        if not np.isfinite(var).any():
            continue
        i = int(np.argmin(var))
        alloc = Allocation(int(dn[i]), r, int(dm[i]))
        candidate = (float(var[i]), cost(pilot, alloc, price_call, price_human), alloc)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return None if best is None else best[2]


def cheapest_for_width(comp: Components, pilot: Pilot, target: float, price_call: float, price_human: float,
                       alpha: float, ceiling: float = 1e12) -> Allocation | None:
    """The cheapest allocation whose predicted width is at most ``target``: the best width for a
    budget never grows with the budget, so a bisection on the budget (to a hundredth of the smaller
    price) over :func:`best_for_budget` finds the least budget that reaches it; None when even
    ``ceiling`` does not."""
    def reaches(budget: float) -> Allocation | None:
        alloc = best_for_budget(comp, pilot, budget, price_call, price_human)
        return alloc if alloc is not None and width(comp, pilot, alloc, alpha) <= target else None

    if (zero := reaches(0.0)) is not None:
        return zero
    lo, hi = 0.0, max(price_call, price_human)
    while reaches(hi) is None:
        lo, hi = hi, hi * 2
        if hi > ceiling:
            return None
    tolerance = min(price_call, price_human) / 100
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if reaches(mid) is not None else (mid, hi)
    return reaches(hi)


def alternatives(comp: Components, pilot: Pilot, budget: float, price_call: float,
                 price_human: float) -> dict[str, Allocation | None]:
    """The budget spent on one resource, the others at the pilot's: all on new questions (r₀ repeats),
    all on repeats (the most r the pilot's questions afford; None without repeat variance), all on
    human labels (at most the unlabelled pilot questions)."""
    questions = Allocation(int(budget // (price_call * (1 + pilot.repeats))), pilot.repeats, 0)
    extra = int(budget // (price_call * pilot.questions)) if pilot.questions else 0
    repeats = Allocation(0, pilot.repeats + extra, 0) if comp.judge_repeat and extra else None
    humans = Allocation(0, pilot.repeats, min(int(budget // price_human), max(pilot.questions - pilot.labels - 1, 0)))
    return {"all on questions": questions, "all on repeats": repeats, "all on humans": humans}


def bootstrap_widths(repeats: list[list[float]], judge: np.ndarray, human: np.ndarray, pilot: Pilot,
                     allocs: list[Allocation], alpha: float, resamples: int, seed: int) -> np.ndarray:
    """Predicted widths of each allocation (columns) under ``resamples`` bootstrap resamples of the
    pilot's items (rows); ``human`` is NaN on unlabelled items. Labelled and judge-only items are
    resampled separately (m₀ stays m₀): the uncertainty of the prediction that comes from estimating
    the components on a finite pilot."""
    rng = np.random.default_rng(seed)
    stats = repeat_stats(repeats)
    lab, unl = np.flatnonzero(~np.isnan(human)), np.flatnonzero(np.isnan(human))
    out = np.empty((resamples, len(allocs)))
    for b in range(resamples):
        pick_lab = rng.choice(lab, len(lab))
        pick = np.concatenate([pick_lab, rng.choice(unl, len(unl)) if len(unl) else unl])
        comp = components(stats[pick], judge[pick], human[pick_lab], judge[pick_lab])
        out[b] = [width(comp, pilot, a, alpha) for a in allocs]
    return out


__all__ = ["Allocation", "Components", "Pilot", "alternatives", "best_for_budget", "bootstrap_widths",
           "cheapest_for_width", "components", "cost", "repeat_stats", "judge_variance", "ppi_variance", "r_squared",
           "residual_variance", "width"]
