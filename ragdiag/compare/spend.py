"""``compare --plan --budget/--target-width``: spend on new questions, judge repeats per answer and
human labels for a paired Δ = new − base of the mean human grade. Math:
:mod:`ragdiag.metrics.budget_paired` on :mod:`ragdiag.metrics.budget_plan`.

Inputs: the two graded files (their ``grades`` are the judge repeats) and ``--human``, the pilot's
human grades of both answers per question (``id``, ``base``, ``new``, each 1–5; both empty: not
labelled). The price of a call, when ``--price-call`` is not given, is the judge model's price from
ragdiag's price table times the tokens per call the grade manifests beside the graded files recorded
(:func:`ragdiag.llm.prices.manifest_call_price`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.metrics import budget_paired as bpp
from ragdiag.metrics import budget_plan as bp
from ragdiag.metrics import plan_designs as pd
from ragdiag.results.calibrate import BudgetPlan

RESAMPLES = 200  # bootstrap resamples of the pilot for the predicted width's interval (as calibrate --plan)
HUMAN_SCALE = (1.0, 5.0)
HUMAN_COLUMNS = ("id", "base", "new")


@dataclass
class SpendRequest:
    """What ``--plan`` spends: ``--human``, the prices (``price_call`` None: the model's known price)
    and one of ``--budget`` / ``--target-width``."""

    human: Path
    price_human: float
    price_call: float | None = None
    budget: float | None = None
    target_width: float | None = None


def check_spend(spend: SpendRequest) -> None:
    """Refuse, before anything is read, a plan that cannot be made (one line each)."""
    if (spend.budget is None) == (spend.target_width is None):
        raise RagdiagError("--plan with prices needs exactly one of --budget (the narrowest interval it buys) or "
                           "--target-width (the cheapest design reaching it)")
    for flag, value in (("--price-human", spend.price_human), ("--price-call", spend.price_call),
                        ("--budget", spend.budget), ("--target-width", spend.target_width)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise RagdiagError(f"{flag} must be above 0, got {value:g}")
    if spend.budget is not None and spend.budget < bpp.SIDES * spend.price_human:
        raise RagdiagError(f"--budget {spend.budget:g} buys less than one labelled question (two human grades at "
                           f"--price-human {spend.price_human:g}); raise --budget or lower --price-human")


def _grade(value: Any, source: str, where: str, column: str) -> float:
    try:
        grade = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{source}: {where}: field '{column}': not a grade: {str(value)[:40]!r}") from None
    if isinstance(value, bool) or not HUMAN_SCALE[0] <= grade <= HUMAN_SCALE[1]:
        raise DataError(f"{source}: {where}: field '{column}': {value!r} is outside the human scale 1–5")
    return grade


def read_human_pairs(path: Path, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The human grades of both sides per question of ``ids`` (NaN where unlabelled): ``path`` holds
    ``id``, ``base``, ``new`` (CSV, TSV, JSON, JSONL or Parquet); an id outside the comparison, an id
    twice, one side graded alone or a grade outside 1–5 is an error naming the record."""
    from ragdiag.data.records import read_records

    records = read_records(path)
    missing = [c for c in HUMAN_COLUMNS if c not in records.columns]
    if missing:
        raise DataError(f"{records.source}: no column '{missing[0]}' ({records.looks_like()}); --human needs id, base, "
                        "new: the human grade 1–5 of each side's answer, both empty when not labelled")
    row_of = {q: i for i, q in enumerate(ids)}
    base, new = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
    seen: set[str] = set()
    for row, where in zip(records.rows, records.where):
        if not isinstance(row, dict):
            raise DataError(f"{records.source}: {where}: expected a record with id, base, new")
        query = str(row.get("id"))
        if query not in row_of:
            raise DataError(f"{records.source}: {where}: field 'id': {query[:60]!r} is not a question of the "
                            "compared graded files")
        if query in seen:
            raise DataError(f"{records.source}: {where}: field 'id': {query[:60]!r} appears twice")
        seen.add(query)
        empty = [c for c in ("base", "new") if row.get(c) is None or str(row.get(c)).strip() == ""]
        if len(empty) == 1:
            raise DataError(f"{records.source}: {where}: field '{empty[0]}': empty while the other side is graded; "
                            "label both answers of a question, or neither")
        if not empty:
            i = row_of[query]
            base[i] = _grade(row["base"], records.source, where, "base")
            new[i] = _grade(row["new"], records.source, where, "new")
    labelled = int((~np.isnan(base)).sum())
    if labelled < bp.MIN_LABELLED:
        raise DataError(f"{records.source}: {labelled} labelled questions; --plan needs at least {bp.MIN_LABELLED} "
                        "with both answers graded (the judge–human covariance comes from them)")
    if labelled == len(ids):
        raise DataError(f"{records.source}: every question is labelled; PPI needs judge-only questions beside the "
                        "labelled ones")
    return base, new


def _stats(repeats: list[list[float]] | None, judge: np.ndarray) -> np.ndarray:
    return bp.repeat_stats(repeats if repeats is not None else [[float(j)] for j in judge])


def paired_plan(base_repeats: list[list[float]] | None, new_repeats: list[list[float]] | None,
                judge_base: np.ndarray, judge_new: np.ndarray, human_base: np.ndarray, human_new: np.ndarray,
                alpha: float, spend: SpendRequest, price_call: float, seed: int) -> BudgetPlan:
    """The plan for Δ = new − base of the mean human grade at two-sided level ``alpha``: the planned
    design, the pilot as is and the budget spent all on questions / repeats / labels, each with its
    predicted width, a bootstrap interval over the pilot's questions and its cost."""
    stats_base, stats_new = _stats(base_repeats, judge_base), _stats(new_repeats, judge_new)
    judge_diff, human_diff = judge_new - judge_base, human_new - human_base
    labelled = ~np.isnan(human_diff)
    comp = bpp.paired_components(stats_base, stats_new, judge_diff, human_diff[labelled], judge_diff[labelled])
    repeats = int(min(stats_base[:, 2].min(), stats_new[:, 2].min()))
    pilot = bp.Pilot(len(judge_diff), repeats, int(labelled.sum()))
    prices = (bpp.SIDES * price_call, bpp.SIDES * spend.price_human)
    designs, note = pd.choose(comp, pilot, prices, alpha, spend.budget, spend.target_width)
    rows = pd.rows(designs, lambda chosen: bpp.paired_bootstrap_widths(stats_base, stats_new, judge_diff, human_diff,
                                                                       pilot, chosen, alpha, RESAMPLES, seed),
                   comp, pilot, prices, alpha)
    components = pd.components(comp, pilot)
    return BudgetPlan("paired Δ = new − base of the mean human grade (PPI++; a question: 2 answers, 2 × repeats "
                      "judge calls; a label: 2 human grades)", price_call, spend.price_human, spend.budget,
                      spend.target_width, {"questions": pilot.questions, "repeats": pilot.repeats,
                                           "labels": pilot.labels},
                      components, rows, RESAMPLES, seed, note)


__all__ = ["SpendRequest", "check_spend", "paired_plan", "read_human_pairs"]
