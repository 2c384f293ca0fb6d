"""``ragdiag calibrate``: judge–human agreement and human-anchored (PPI) estimates on a graded file.

Checks every input before computing anything (graded file, human grades, overlap, the 10 labels PPI
needs, the labelling sheet not already there), then computes agreement, mean grade per group and the
slope of grade on P, R and nDCG (PPI, judge-only, human-only), picks the items to label next, and
writes the result and the sheet. Math: :mod:`ragdiag.metrics.ppi_estimates`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.commands.calibrate_design import DesignRequest, Draw, check_design, design_estimate, draw, judge_sd
from ragdiag.commands.calibrate_plan import PlanRequest, check_plan, make_plan
from ragdiag.data.graded_table import (
    GradedSource,
    build_graded_table,
    ideal_answer_kinds,
)
from ragdiag.data.human_grades import DESIGN_COLUMNS, HumanGrade, ItemKey, match_rows, read_human_grades, sheet_cell
from ragdiag.data.reference_gate import KINDS, count_kinds, make_gate
from ragdiag.errors import RagdiagError
from ragdiag.evaluate.agreement import judge_human_agreement
from ragdiag.io.jsonl import read_json_records
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import guard_outputs, write_json, write_text
from ragdiag.measures.registry import CALIBRATE_SLOPES
from ragdiag.metrics.measure_tables import evaluate, record_columns
from ragdiag.metrics.ppi_estimates import (
    MIN_LABELLED,
    grade_entropy,
    mean_estimates,
    slope_estimates,
)
from ragdiag.results.calibrate import Agreement, CalibrateMeta, CalibrateResult, Estimates, Suggested

GROUPINGS = ("config", "K", "system")
SLOPE_MEASURES = CALIBRATE_SLOPES  # ("P", "R", "nDCG"), from the measure registry
NO_ALPHAS = np.empty(0)  # the slope measures take no α
SHEET_COLUMNS = ("question", "ideal_answer", "candidate_answer", "id", "E", "K", "Nc", "Np", "grade")


@dataclass
class CalibrateRequest:
    graded: Path
    human: Path | None = None
    by: str = "config"
    out: Path | None = None
    alpha: float = 0.1
    suggest: int = 0
    sheet: Path = Path("to_label.csv")
    answers: Path | None = None
    keep_degenerate: bool = False
    plan: PlanRequest | None = None
    design: DesignRequest | None = None


@dataclass
class Item:
    key: ItemKey
    record: dict[str, Any]
    judge: float
    measures: dict[str, float]


def _key(record: dict[str, Any]) -> ItemKey:
    return (record["id"], record["E"], record["Nc"], record["Np"], record["K"])


def _graded_records(path: Path) -> Any:
    """The graded file's records: JSON, JSON lines or the Parquet ``grade`` writes; a CSV or TSV table is one
    error saying what it looks like and what reads it."""
    from ragdiag.data.graded_parquet import graded_parquet_records, is_parquet
    from ragdiag.data.own_inputs import content_format
    from ragdiag.data.records import read_records
    from ragdiag.io.files import existing_file

    fmt = content_format(existing_file(path))
    if is_parquet(path) or fmt == "parquet":
        return graded_parquet_records(path)
    if fmt in ("csv", "tsv"):
        raise RagdiagError(f"{path}: this looks like {read_records(path, fmt).looks_like()}, not a graded file; "
                           "--graded reads the graded file of `ragdiag grade` (JSON, JSON lines or Parquet); a table "
                           "of your own per-query metrics and grades goes to `ragdiag correlate --table`")
    return read_json_records(path)


def _items(path: Path, keep_degenerate: bool = False) -> tuple[list[Item], list[ItemKey], dict[str, Any]]:
    """Graded rows with a judge grade, validated as ``correlate`` validates them, every row's key, and
    the reference gate's count: rows whose ideal answer is degenerate (``ideal_degenerate`` as ``grade``
    wrote it, else the gate on ``answer_ideal``, as ``correlate``) are left out unless ``keep_degenerate``."""
    records = _graded_records(path)
    if not isinstance(records, list):
        raise RagdiagError(f"{path}: expected a JSON list of graded samples")
    build_graded_table(records, str(path), GradedSource(name=str(path)))  # validates, refuses duplicate keys
    graded = [record for record in records if record.get("grade") is not None]
    kinds = ideal_answer_kinds(graded, make_gate()) if graded else None
    degenerate = [kind for kind in (kinds or []) if kind]
    gate = {"applied": kinds is not None, "rows_checked": len(graded), "degenerate_rows": len(degenerate),
            "by_kind": {kind: n for kind, n in count_kinds(degenerate).items() if kind in KINDS and n}, "kept": keep_degenerate,
            "excluded_rows": 0 if keep_degenerate else len(degenerate)}
    kept = [record for index, record in enumerate(graded)
            if kinds is None or not kinds[index] or keep_degenerate]
    # each slope measure computed by its registry implementation on the rows' columns (as correlate does)
    columns = record_columns(kept, SLOPE_MEASURES)
    values = {name: evaluate(name, columns, NO_ALPHAS)[0].tolist() for name in SLOPE_MEASURES}
    items = [Item(_key(record), record, float(record["grade"]), {name: values[name][row] for name in SLOPE_MEASURES})
             for row, record in enumerate(kept)]
    if not items:
        raise RagdiagError(f"{path}: no graded rows with a grade" + (
            f" once the {gate['excluded_rows']} graded against a degenerate ideal answer are left out "
            "(--keep-degenerate uses them)" if gate["excluded_rows"] else ""))
    return items, [_key(record) for record in records], gate


def group_of(item: Item, by: str) -> str:
    """The group an item belongs to: config = (E, K), K, or system = E."""
    _, embedder, _, _, k = item.key
    return {"config": f"{embedder} K={k}", "K": f"K={k}", "system": embedder}[by]


def uncertainty(items: list[Item]) -> tuple[np.ndarray | None, str | None]:
    """Judge uncertainty per item: entropy of ``grade_probs`` when every item has them, else the SD of
    its repeated grades; (None, None) when the file holds neither."""
    probs = [it.record.get("grade_probs") for it in items]
    if all(isinstance(p, list) and len(p) == 5 and all(isinstance(x, (int, float)) and x >= 0 for x in p)
           and sum(p) > 0 for p in probs):
        return grade_entropy(np.array(probs, dtype=np.float64)), "entropy of grade_probs"
    repeats = [[g for g in (it.record.get("grades") or []) if isinstance(g, (int, float))] for it in items]
    if any(len(r) >= 2 for r in repeats):
        return np.array([np.std(r, ddof=1) if len(r) >= 2 else 0.0 for r in repeats]), "SD of repeated grades"
    return None, None


def _questions(answers: Path | None) -> dict[str, str]:
    if answers is None:
        return {}
    from ragdiag.answers.answers_file import read_answers

    return {row["id"]: row["q"] for row in read_answers(answers).rows}


def sheet_text(items: list[Item], questions: dict[str, str], design: DesignRequest | None = None,
               drawn: Draw | None = None) -> str:
    """The labelling sheet: one CSV row per item, its grade column empty; text cells that a spreadsheet
    would run as formulas are neutralised (:func:`ragdiag.data.human_grades.sheet_cell`). A ``--strategy``
    sheet adds how each row was drawn (``DESIGN_COLUMNS``: strategy, strata, stratum, probability, seed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(SHEET_COLUMNS + (DESIGN_COLUMNS if design is not None else ()))
    for index, it in enumerate(items):
        record = it.record
        texts = (record.get("q") or questions.get(record["id"], ""), record.get("answer_ideal") or "",
                 record.get("answer_topK") or "", *it.key[:2])
        row = [*map(sheet_cell, map(str, texts)), it.key[4], it.key[2], it.key[3], ""]
        if design is not None and drawn is not None:
            row += [design.strategy, design.strata or "", sheet_cell(drawn.strata[index]),
                    repr(drawn.pi[index]), design.seed]
        writer.writerow(row)
    return buffer.getvalue()


def _check(request: CalibrateRequest) -> None:
    from ragdiag.io.paths import check_paths

    check_paths(inputs={"--graded": request.graded, "--human": request.human, "--answers": request.answers},
                outputs={"--out": request.out, "--sheet": request.sheet if request.suggest else None})
    if request.by not in GROUPINGS:
        raise RagdiagError(f"--by must be one of {', '.join(GROUPINGS)}, got {request.by!r}")
    if not 0 < request.alpha < 1:
        raise RagdiagError(f"--alpha must be in (0, 1), got {request.alpha}")
    if request.suggest < 0:
        raise RagdiagError(f"--suggest must be at least 0, got {request.suggest}")
    check_design(request.design, request.suggest, request.human is not None)
    if request.human is None and not request.suggest:
        raise RagdiagError("give --human FILE (human grades) or --suggest N (a labelling sheet to start with)")
    check_plan(request.plan, request.human is not None, request.graded)
    inputs = [request.graded, request.human, request.answers]
    guard_outputs([request.out, request.sheet if request.suggest else None], inputs)
    if request.suggest and request.sheet.exists():
        raise RagdiagError(f"--sheet {request.sheet} already exists; a labelling sheet is never overwritten "
                           "(fill it in and pass it to --human, or choose another --sheet)")


def _estimates(items: list[Item], human: dict[ItemKey, int], by: str, alpha: float) -> Estimates:
    """Prediction-powered mean grade per group (``all`` first) and the slope of each measure (NaN → null)."""
    labelled = [it for it in items if it.key in human]
    unlabelled = [it for it in items if it.key not in human]
    order = {group_of(it, by): (it.key[1] if by != "K" else "", it.key[4] if by != "system" else 0) for it in items}
    groups = ["all", *sorted(order, key=order.__getitem__)]
    means = []
    for group in groups:
        inside = (lambda it: True) if group == "all" else (lambda it, g=group: group_of(it, by) == g)
        lab = [it for it in labelled if inside(it)]
        unl = [it for it in unlabelled if inside(it)]
        means.append({"group": group, **mean_estimates(np.array([human[it.key] for it in lab]),
                                                       np.array([it.judge for it in lab]),
                                                       np.array([it.judge for it in unl]), alpha)})
    slopes = []
    for measure in SLOPE_MEASURES:
        slopes.append({"measure": measure, **slope_estimates(
            np.array([it.measures[measure] for it in labelled]), np.array([human[it.key] for it in labelled]),
            np.array([it.judge for it in labelled]), np.array([it.measures[measure] for it in unlabelled]),
            np.array([it.judge for it in unlabelled]), alpha)})
    return Estimates.from_json(finite({"by": by, "alpha": alpha, "mean_grade": means, "slopes": slopes}))


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (NaN is never written into JSON)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def run(request: CalibrateRequest) -> CalibrateResult:
    """Check, compute, write ``--out`` and the sheet; the result (stamped with the run record)."""
    _check(request)
    record = start_run("ragdiag calibrate", inputs=[request.graded, request.human, request.answers])
    items, all_keys, gate = _items(request.graded, request.keep_degenerate)
    human: dict[ItemKey, int] = {}
    sheet_rows: dict[ItemKey, HumanGrade] = {}
    if request.human is not None:
        rows = read_human_grades(request.human)
        judged = {it.key for it in items}
        sheet_rows = {k: row for k, row in match_rows(rows, all_keys, request.human).items() if k in judged}
        human = {k: row.grade for k, row in sheet_rows.items() if row.grade is not None}
        if not human:
            raise RagdiagError(f"{request.human}: no overlap — none of its {len(rows)} rows gives a grade for an "
                               f"item graded in {request.graded}")
        if len(human) < MIN_LABELLED:
            left_out = (f" (rows graded against a degenerate ideal answer are left out: {gate['excluded_rows']}; "
                        "--keep-degenerate uses them)" if gate["excluded_rows"] else "")
            raise RagdiagError(f"{request.human}: {len(human)} labelled items overlap the graded file{left_out}; "
                               f"prediction-powered inference needs at least {MIN_LABELLED} (label more: --suggest N)")
    scores, signal = uncertainty(items) if request.suggest and request.design is None else (None, None)
    if request.suggest and request.design is None and scores is None:
        raise RagdiagError(f"--suggest: {request.graded} has no judge uncertainty signal (no grade_probs, no "
                           "repeated grades); grade with --repeats 3 (or --grade-mode logprobs) first")
    questions = _questions(request.answers) if request.suggest else {}
    overlap = [it for it in items if it.key in human]
    judged_human = judge_human_agreement(np.array([it.judge for it in overlap]),
                             np.array([human[it.key] for it in overlap])) if overlap else None
    estimates = _estimates(items, human, request.by, request.alpha)
    design = None if request.human is None else design_estimate(
        sheet_rows, [it.key for it in items], [it.record for it in items], np.array([it.judge for it in items]),
        human, estimates.mean_grade[0].ppi, request.alpha, str(request.human))
    suggested: Suggested | None = None
    picked: list[Item] = []
    drawn: Draw | None = None
    if request.suggest and request.design is not None:
        pool = [it for it in items if it.key not in human]
        drawn = draw(request.design, request.suggest, [it.record for it in pool],
                     np.array([it.judge for it in pool]), str(request.graded))
        picked = [pool[i] for i in drawn.picked]
        sd = judge_sd([it.record for it in picked]) if picked else None
        suggested = Suggested(str(request.sheet), len(picked), "SD of the judge's grades" if sd is not None else
                              "none", [] if sd is None else [float(v) for v in sd], None, request.design.strategy,
                              request.design.strata, request.design.seed, drawn.expected)
    elif request.suggest and scores is not None:  # no signal was refused above
        ranks = scores
        candidates = [i for i, it in enumerate(items) if it.key not in human]
        order = sorted(candidates, key=lambda i: (-ranks[i], items[i].key))[: request.suggest]
        picked = [items[i] for i in order]
        suggested = Suggested(str(request.sheet), len(picked), str(signal), [float(scores[i]) for i in order],
                              "the judge is equally sure of every unlabelled item (uncertainty 0): picked in file order"
                              if picked and scores[order[0]] == 0 else None)
    meta = CalibrateMeta(command="calibrate", graded=str(request.graded),
                         human=None if request.human is None else str(request.human), by=request.by,
                         alpha=request.alpha, items=len(items), labelled=len(human), reference_gate=gate,
                         judge_grade="expected grade from grade_probs" if all("grade_probs" in it.record for it in items)
                         else "grade (mean of the first judge's repeats)")
    plan = None if request.plan is None else make_plan(
        [it.record for it in items], np.array([it.judge for it in items]),
        np.array([human.get(it.key, np.nan) for it in items], dtype=np.float64), request.alpha, request.plan)
    agreement = finite(judged_human)
    result = CalibrateResult(meta, Agreement.from_json(agreement) if agreement else None, estimates,
                             suggested, plan, design, run_record=record.to_json())
    if suggested is not None:
        write_text(request.sheet, sheet_text(picked, questions, request.design, drawn),
                   inputs=[request.graded, request.human, request.answers])
    if request.out is not None:
        write_json(request.out, result.to_json(), inputs=[request.graded, request.human, request.answers])
    return result
