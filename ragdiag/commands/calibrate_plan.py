"""``ragdiag calibrate --plan``: spend a budget (or reach a width) on new questions, judge repeats and
human labels, planned from the pilot's own variance components. Math: :mod:`ragdiag.metrics.budget_plan`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.metrics import budget_plan as bp
from ragdiag.results.calibrate import BudgetPlan, PlanComponents, PlannedDesign

RESAMPLES = 200  # bootstrap resamples of the pilot for the predicted width's interval


@dataclass
class PlanRequest:
    price_call: float | None  # None: the judge model's known price, from the graded file's grade manifest
    price_human: float
    budget: float | None = None
    target_width: float | None = None
    seed: int = 0
    price_source: str | None = None  # the judge model's known price (llm/prices.py), when --price-call is absent


def check_plan(plan: PlanRequest | None, human_given: bool, graded: Path) -> None:
    """Refuse, before any work, a plan that cannot be made (one line each); without --price-call, the judge
    model's known price from ``graded``'s grade manifest (:func:`ragdiag.llm.prices.manifest_call_price`)."""
    if plan is None:
        return
    if not human_given:
        raise RagdiagError("--plan needs the pilot's human grades (--human FILE with at least 10 labelled items): "
                           "the judge–human covariance comes from them")
    if (plan.budget is None) == (plan.target_width is None):
        raise RagdiagError("--plan needs exactly one of --budget (the narrowest interval it buys) or "
                           "--target-width (the cheapest design reaching it)")
    if plan.budget is not None and plan.budget < plan.price_human:
        raise RagdiagError(f"--budget {plan.budget:g} buys less than one human label (--price-human "
                           f"{plan.price_human:g}); raise --budget or lower --price-human")
    if plan.price_call is None:
        from ragdiag.commands.provenance import sidecar_manifests
        from ragdiag.llm.prices import load_prices, manifest_call_price

        known = manifest_call_price([(str(graded), sidecar_manifests(graded))], load_prices(None))
        plan.price_call, plan.price_source = known.value, known.source


def _repeats(record: dict[str, Any], judge: float) -> list[float]:
    grades = [float(g) for g in (record.get("grades") or []) if isinstance(g, (int, float))]
    return grades if len(grades) >= 2 else [judge]


def make_plan(records: list[dict[str, Any]], judge: np.ndarray, human: np.ndarray, alpha: float,
              plan: PlanRequest) -> BudgetPlan:
    """The plan for the overall mean grade: ``records`` the graded rows used (their ``grades`` are the
    judge repeats), ``judge`` their judge grades, ``human`` their human grades (NaN when unlabelled)."""
    repeats = [_repeats(record, float(j)) for record, j in zip(records, judge)]
    labelled = ~np.isnan(human)
    comp = bp.components(repeats, judge, human[labelled], judge[labelled])
    pilot = bp.Pilot(len(judge), min(len(r) for r in repeats), int(labelled.sum()))
    assert plan.price_call is not None  # check_plan gave it the known price when --price-call was absent
    prices = (plan.price_call, plan.price_human)
    note = None if comp.judge_repeat else ("the pilot has no repeated grades: the judge-repeat variance is "
                                           "unknown and repeats are not planned (grade with --repeats 2 or more)")
    if plan.budget is not None:
        budget = plan.budget
        best = bp.best_for_budget(comp, pilot, budget, *prices)
    else:
        assert plan.target_width is not None
        best = bp.cheapest_for_width(comp, pilot, plan.target_width, *prices, alpha)
        if best is None:
            note = f"no design of up to 10¹² reaches --target-width {plan.target_width:g}"
        budget = bp.cost(pilot, best, *prices) if best is not None else 0.0
    designs: list[tuple[str, bp.Allocation | None]] = [("pilot as is", bp.Allocation(0, pilot.repeats, 0)),
                                                       ("planned", best)]
    designs += list(bp.alternatives(comp, pilot, budget, *prices).items()) if best is not None else []
    chosen = [alloc for _, alloc in designs if alloc is not None]
    spread = bp.bootstrap_widths(repeats, judge, human, pilot, chosen, alpha, RESAMPLES, plan.seed)
    rows, column = [], 0
    for name, alloc in designs:
        if alloc is None:
            continue
        low, high = np.percentile(spread[:, column], [100 * alpha / 2, 100 * (1 - alpha / 2)])
        column += 1
        w = bp.width(comp, pilot, alloc, alpha)
        rows.append(PlannedDesign(name, alloc.new_questions, alloc.repeats, alloc.new_labels,
                                  pilot.questions + alloc.new_questions, pilot.labels + alloc.new_labels,
                                  w if np.isfinite(w) else None,
                                  [float(v) if np.isfinite(v) else None for v in (low, high)],
                                  round(bp.cost(pilot, alloc, *prices), 6)))
    components = PlanComponents(comp.between_question, comp.judge_repeat, comp.human, comp.covariance,
                                bp.residual_variance(comp, pilot), bp.r_squared(comp, pilot.repeats))
    return BudgetPlan("mean grade over all items (PPI++)", plan.price_call, plan.price_human, plan.budget,
                      plan.target_width, {"questions": pilot.questions, "repeats": pilot.repeats,
                                          "labels": pilot.labels},
                      components, rows, RESAMPLES, plan.seed, note, plan.price_source)
