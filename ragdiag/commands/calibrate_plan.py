"""``ragdiag calibrate --plan``: spend a budget (or reach a width) on new questions, judge repeats and
human labels, planned from the pilot's own variance components. Math: :mod:`ragdiag.metrics.budget_plan`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.metrics import budget_plan as bp
from ragdiag.metrics import plan_designs as pd
from ragdiag.results.calibrate import BudgetPlan

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
    designs, note = pd.choose(comp, pilot, prices, alpha, plan.budget, plan.target_width)
    rows = pd.rows(designs, lambda chosen: bp.bootstrap_widths(repeats, judge, human, pilot, chosen, alpha, RESAMPLES,
                                                                plan.seed), comp, pilot, prices, alpha)
    components = pd.components(comp, pilot)
    return BudgetPlan("mean grade over all items (PPI++)", plan.price_call, plan.price_human, plan.budget,
                      plan.target_width, {"questions": pilot.questions, "repeats": pilot.repeats,
                                          "labels": pilot.labels},
                      components, rows, RESAMPLES, plan.seed, note, plan.price_source)
