"""The budget plan of a paired Δ = new − base of the mean human grade (``compare --plan --budget``).

Per question i the human difference is Dᵢ = Y_new,i − Y_base,i and the judge's is D̂ᵢ = Ŷ_new,i − Ŷ_base,i,
each side's Ŷ the mean of its r judge repeats. PPI++ on the mean of D is the estimator of
:mod:`ragdiag.metrics.budget_plan` with Y → D and Ŷ → D̂ (Angelopoulos, Duchi & Zrnic 2023,
arXiv:2311.01453). The variance components of D̂ (method of moments, as there):

* repeat variance σ²_rep(D) = σ²_rep,base + σ²_rep,new (the two sides' judge noise is independent),
  each side pooled over its items with ≥ 2 repeats, so that Var(D̂ᵢ | question) = σ²_rep(D) / r;
* between-question variance σ²_J(D) = Var(D̂) − mean(σ²_rep,base / r_base,i + σ²_rep,new / r_new,i),
  raised to c²/σ²_D when below (as there);
* σ²_D = Var(D) and c = Cov(D, D̂) on the labelled questions.

Costs: a question holds two answers, so a new question costs 2·(1 + r) calls, raising the repeats to r
costs 2·n₀·(r − r₀) calls and a labelled question costs two human grades — the single-side plan with
the prices doubled (:data:`SIDES`).
"""

from __future__ import annotations

import numpy as np

from ragdiag.metrics import budget_plan as bp

SIDES = 2  # a paired question: two answers, two sets of repeats, two human grades


def pooled_repeat(stats: np.ndarray) -> float | None:
    """σ²_rep = Σ squares / Σ dfs over the items with ≥ 2 repeats (rows of :func:`bp.repeat_stats`)."""
    multi = stats[:, 1] >= 1
    return float(stats[multi, 0].sum() / stats[multi, 1].sum()) if multi.any() else None


def paired_components(base_stats: np.ndarray, new_stats: np.ndarray, judge_diff: np.ndarray,
                      human_diff: np.ndarray, judge_diff_labelled: np.ndarray) -> bp.Components:
    """The components of D̂ (module docstring): ``*_stats`` each side's :func:`bp.repeat_stats` per
    question, ``judge_diff`` D̂ of every question, ``human_diff`` / ``judge_diff_labelled`` the labelled ones."""
    rep_base, rep_new = pooled_repeat(base_stats), pooled_repeat(new_stats)
    rep = None if rep_base is None and rep_new is None else (rep_base or 0.0) + (rep_new or 0.0)
    noise = float(np.mean((rep_base or 0.0) / base_stats[:, 2] + (rep_new or 0.0) / new_stats[:, 2]))
    cov = float(np.cov(human_diff, judge_diff_labelled, ddof=1)[0, 1])
    var_human = float(np.var(human_diff, ddof=1))
    floor = cov**2 / var_human if var_human > 0 else 0.0
    between = max(float(np.var(judge_diff, ddof=1)) - noise, floor)
    return bp.Components(between, rep, var_human, cov)


def paired_bootstrap_widths(base_stats: np.ndarray, new_stats: np.ndarray, judge_diff: np.ndarray,
                            human_diff: np.ndarray, pilot: bp.Pilot, allocs: list[bp.Allocation], alpha: float,
                            resamples: int, seed: int) -> np.ndarray:
    """Predicted widths of each allocation (columns) under ``resamples`` bootstrap resamples of the
    pilot's questions (rows), labelled and judge-only questions resampled separately (``human_diff``
    NaN where unlabelled), as :func:`bp.bootstrap_widths` does for one side."""
    rng = np.random.default_rng(seed)
    lab, unl = np.flatnonzero(~np.isnan(human_diff)), np.flatnonzero(np.isnan(human_diff))
    out = np.empty((resamples, len(allocs)))
    for b in range(resamples):
        pick_lab = rng.choice(lab, len(lab))
        pick = np.concatenate([pick_lab, rng.choice(unl, len(unl)) if len(unl) else unl])
        comp = paired_components(base_stats[pick], new_stats[pick], judge_diff[pick], human_diff[pick_lab],
                                 judge_diff[pick_lab])
        out[b] = [bp.width(comp, pilot, a, alpha) for a in allocs]
    return out


__all__ = ["SIDES", "paired_bootstrap_widths", "paired_components", "pooled_repeat"]
