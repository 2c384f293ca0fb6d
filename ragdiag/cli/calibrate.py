"""``ragdiag calibrate``: how far the judge agrees with humans, and human-anchored (PPI) estimates."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o


class Grouping(str, Enum):
    """Groups of the mean-grade estimates."""

    config = "config"
    K = "K"
    system = "system"


class Strategy(str, Enum):
    """How --suggest draws the items humans should label."""

    uniform = "uniform"
    stratified = "stratified"
    active = "active"


class StrataBy(str, Enum):
    """The built-in strata of --strategy stratified."""

    grade = "grade"
    disagreement = "disagreement"


def calibrate(
    graded: Annotated[Path, o.retold(o.Graded, "The graded file of grade (samples_graded: JSON list, JSONL or Parquet) whose judge grades are checked.")],
    human: Annotated[Optional[Path], o.retold(o.Human, "Human grades (.jsonl or .csv): id, E, K (Nc, Np if ambiguous), grade 1–5; an empty grade is unlabelled. A filled-in --suggest sheet works as is.")] = None,
    by: Annotated[Grouping, o.option(o.STATISTICS, "--by", help="Mean grade per config (E and K), per K, or per system (E).", metavar=o.choices_metavar(Grouping))] = Grouping.config,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result as JSON (with its run record).")] = None,
    fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: a table (default) or JSON; --out always writes JSON, and the terminal still shows the result and one 'wrote PATH' line.")] = None,
    quiet: o.Quiet = False,
    alpha: Annotated[float, o.float_option(o.STATISTICS, "--alpha", "Error level of the intervals: (1 − α) coverage.", 0.0, 0.5, lo_open=True)] = 0.1,
    suggest: Annotated[int, o.int_option(o.OUTPUT, "--suggest", "Write a labelling sheet with N unlabelled items (0 = none): the N whose judge is least sure, or with --strategy a random draw of N whose sampling probabilities the sheet records.", 0, 1_000_000)] = 0,
    strategy: Annotated[Optional[Strategy], o.option(o.OUTPUT, "--strategy", help="--suggest: draw the items uniformly, stratified (--strata-by, --strata-col) or actively (probability ∝ the judge's uncertainty); the filled sheet then gives the design's estimate. Without it, the N least-sure items (not a random draw).", metavar=o.choices_metavar(Strategy))] = None,
    strata_by: Annotated[StrataBy, o.option(o.OUTPUT, "--strata-by", help="--strategy stratified: strata by the judge grade (rounded) or by the judge's disagreement across repeats (agree, near, far).", metavar=o.choices_metavar(StrataBy))] = StrataBy.grade,
    strata_col: Annotated[Optional[str], o.text_option(o.OUTPUT, "--strata-col", "--strategy stratified: strata by this column of the graded rows instead (every stratum needs 2 items).")] = None,
    sheet: Annotated[Path, o.path_option(o.OUTPUT, "--sheet", "Where --suggest writes its sheet (never overwritten).")] = Path("to_label.csv"),
    answers: Annotated[Optional[Path], o.retold(o.Answers, "The answers file of 'ragdiag generate', to fill the sheet's question column.")] = None,
    keep_degenerate: Annotated[bool, o.retold(o.KeepDegenerate, "Use rows whose ideal answer is degenerate (a refusal, a prompt echo, an empty or overlong answer: the reference-quality gate); by default they are left out and counted, as correlate does.")] = False,
    plan: Annotated[bool, o.option(o.STATISTICS, "--plan", help="Also plan the next spend on new questions, judge repeats per question and human labels from this pilot's variance components: with --price-call, --price-human and --budget or --target-width.")] = False,
    price_call: o.PriceCall = None,
    price_human: o.PriceHuman = None,
    budget: o.PlanBudget = None,
    target_width: o.TargetWidth = None,
    seed: o.Seed = 0,
) -> None:
    """Judge–human agreement (weighted κ, Spearman, exact and ±1 agreement, confusion matrix, bias) and
    prediction-powered estimates of the mean grade and of the slope of grade on P, R and nDCG, next to
    judge-only and human-only ones; --suggest N writes the items worth labelling next; --plan says how
    to spend a budget on questions, judge repeats and human labels."""
    import json

    from rich.console import Console

    from ragdiag.cli.show import show_result
    from ragdiag.commands.calibrate import CalibrateRequest, run
    from ragdiag.commands.calibrate_design import DesignRequest
    from ragdiag.commands.calibrate_plan import PlanRequest
    from ragdiag.errors import RagdiagError
    from ragdiag.report.calibrate_report import print_calibration

    planning = {"--price-call": price_call, "--price-human": price_human, "--budget": budget,
                "--target-width": target_width}
    if not plan and any(v is not None for v in planning.values()):
        raise RagdiagError(f"{', '.join(k for k, v in planning.items() if v is not None)} only apply with --plan")
    if plan and price_human is None:
        raise RagdiagError("--plan needs --price-human (the price of one human label) and --price-call (the price of "
                           "one LLM call; without it, the judge model's known price from the graded file's manifest)")
    plan_request = PlanRequest(price_call, price_human, budget, target_width, seed) if plan and price_human else None
    if strategy is None and (strata_col is not None or strata_by != StrataBy.grade):
        raise RagdiagError("--strata-by and --strata-col only apply with --strategy stratified")
    design = None if strategy is None else DesignRequest(strategy.value, strata_by.value, strata_col, seed)
    result = run(CalibrateRequest(graded, human, by.value, out, alpha, suggest, sheet, answers, keep_degenerate,
                                  plan_request, design))
    from ragdiag.commands.provenance import simulated_rows
    from ragdiag.report.provenance import SIMULATED_FILE_LINE

    simulated = [str(path) for path in (graded, human) if simulated_rows(path)]
    if simulated and not quiet:  # on stderr too when stdout carries JSON
        Console(stderr=fmt is not None and fmt.value == "json").print(
            SIMULATED_FILE_LINE.format(files=" and ".join(simulated)), style="bold red", highlight=False)
    show_result(out, fmt, quiet, lambda: print_calibration(result, Console(width=max(Console().width, 120))),
                lambda shown: json.dumps(result.to_json(), indent=1, ensure_ascii=False) + "\n")
