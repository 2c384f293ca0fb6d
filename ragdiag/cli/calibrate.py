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


def calibrate(
    graded: Annotated[Path, o.retold(o.Graded, "The graded file of grade (samples_graded: JSON list, JSONL or Parquet) whose judge grades are checked.")],
    human: Annotated[Optional[Path], o.retold(o.Human, "Human grades (.jsonl or .csv): id, E, K (Nc, Np if ambiguous), grade 1–5; an empty grade is unlabelled. A filled-in --suggest sheet works as is.")] = None,
    by: Annotated[Grouping, o.option(o.STATISTICS, "--by", help="Mean grade per config (E and K), per K, or per system (E).", metavar=o.choices_metavar(Grouping))] = Grouping.config,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result as JSON (with its run record).")] = None,
    fmt: Annotated[Optional[o.TableFormat], o.retold(o.TableFormatOpt, "What to print: a table (default) or JSON; --out always writes JSON, and the terminal still shows the result and one 'wrote PATH' line.")] = None,
    quiet: o.Quiet = False,
    alpha: Annotated[float, o.float_option(o.STATISTICS, "--alpha", "Error level of the intervals: (1 − α) coverage.", 0.0, 0.5, lo_open=True)] = 0.1,
    suggest: Annotated[int, o.int_option(o.OUTPUT, "--suggest", "Write a labelling sheet with the N unlabelled items whose judge is least sure (0 = none).", 0, 1_000_000)] = 0,
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
    from ragdiag.commands.calibrate_plan import PlanRequest
    from ragdiag.errors import RagdiagError
    from ragdiag.report.calibrate_report import print_calibration

    planning = {"--price-call": price_call, "--price-human": price_human, "--budget": budget,
                "--target-width": target_width}
    if not plan and any(v is not None for v in planning.values()):
        raise RagdiagError(f"{', '.join(k for k, v in planning.items() if v is not None)} only apply with --plan")
    if plan and (price_call is None or price_human is None):
        raise RagdiagError("--plan needs --price-call and --price-human (the price of one LLM call and of one "
                           "human label)")
    plan_request = PlanRequest(price_call, price_human, budget, target_width, seed) if plan and price_call and \
        price_human else None
    result = run(CalibrateRequest(graded, human, by.value, out, alpha, suggest, sheet, answers, keep_degenerate,
                                  plan_request))
    from ragdiag.commands.provenance import simulated_rows
    from ragdiag.report.provenance import SIMULATED_FILE_LINE

    simulated = [str(path) for path in (graded, human) if simulated_rows(path)]
    if simulated and not quiet:  # on stderr too when stdout carries JSON
        Console(stderr=fmt is not None and fmt.value == "json").print(
            SIMULATED_FILE_LINE.format(files=" and ".join(simulated)), style="bold red", highlight=False)
    show_result(out, fmt, quiet, lambda: print_calibration(result, Console(width=max(Console().width, 120))),
                lambda shown: json.dumps(result.to_json(), indent=1, ensure_ascii=False) + "\n")
