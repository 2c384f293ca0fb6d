"""The designs a budget plan shows side by side — the pilot as is, the planned design and the budget spent on
one resource only — and their rows, shared by ``calibrate --plan`` (a mean grade) and ``compare --plan`` (a
paired Δ). The widths and costs are :mod:`ragdiag.metrics.budget_plan`'s; each caller brings its own pilot
bootstrap (one column per design, in order)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragdiag.metrics import budget_plan as bp
from ragdiag.results.calibrate import PlanComponents, PlannedDesign

NO_REPEATS = ("the pilot has no repeated grades: the judge-repeat variance is unknown and repeats are not planned "
              "(grade with --repeats 2 or more)")


def choose(comp: bp.Components, pilot: bp.Pilot, prices: tuple[float, float], alpha: float, budget: float | None,
           target_width: float | None) -> tuple[list[tuple[str, bp.Allocation]], str | None]:
    """(name, allocation) of every design to show, and the plan's note: with ``budget`` the narrowest design it
    buys, else the cheapest reaching ``target_width`` (then the alternatives spend that design's cost)."""
    note = None if comp.judge_repeat else NO_REPEATS
    if budget is not None:
        best = bp.best_for_budget(comp, pilot, budget, *prices)
    else:
        assert target_width is not None
        best = bp.cheapest_for_width(comp, pilot, target_width, *prices, alpha)
        if best is None:
            note = f"no design of up to 10¹² reaches --target-width {target_width:g}"
        budget = bp.cost(pilot, best, *prices) if best is not None else 0.0
    designs: list[tuple[str, bp.Allocation | None]] = [("pilot as is", bp.Allocation(0, pilot.repeats, 0)),
                                                       ("planned", best)]
    designs += list(bp.alternatives(comp, pilot, budget, *prices).items()) if best is not None else []
    return [(name, alloc) for name, alloc in designs if alloc is not None], note


def rows(designs: list[tuple[str, bp.Allocation]], widths: Callable[[list[bp.Allocation]], np.ndarray],
         comp: bp.Components, pilot: bp.Pilot, prices: tuple[float, float], alpha: float) -> list[PlannedDesign]:
    """One row per design: its totals, predicted width with the (α/2, 1 − α/2) percentiles of ``widths`` (the
    caller's pilot bootstrap: resamples × designs) and its cost."""
    spread = widths([alloc for _, alloc in designs])
    out = []
    for column, (name, alloc) in enumerate(designs):
        low, high = np.percentile(spread[:, column], [100 * alpha / 2, 100 * (1 - alpha / 2)])
        w = bp.width(comp, pilot, alloc, alpha)
        out.append(PlannedDesign(name, alloc.new_questions, alloc.repeats, alloc.new_labels,
                                 pilot.questions + alloc.new_questions, pilot.labels + alloc.new_labels,
                                 w if np.isfinite(w) else None,
                                 [float(v) if np.isfinite(v) else None for v in (low, high)],
                                 round(bp.cost(pilot, alloc, *prices), 6)))
    return out


def components(comp: bp.Components, pilot: bp.Pilot) -> PlanComponents:
    """The pilot's variance components as the result shows them (with the residual after λ and R²)."""
    return PlanComponents(comp.between_question, comp.judge_repeat, comp.human, comp.covariance,
                          bp.residual_variance(comp, pilot), bp.r_squared(comp, pilot.repeats))
