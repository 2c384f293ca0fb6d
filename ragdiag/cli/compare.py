"""``ragdiag compare``: did the change make retrieval or answers worse, and how many queries does it take to know?"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o


class PairedTest(str, Enum):
    """The paired test of each metric: Student's t, sign-flip randomization, percentile bootstrap."""

    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Correction(str, Enum):
    """Family correction of the metrics' p-values: Holm, Benjamini–Hochberg, none."""

    holm = "holm"
    bh = "bh"
    none = "none"


def compare(
    base: Annotated[Path, o.path_option(o.INPUT, "--base", "The reference side: a run (with --qrels), a graded file, or a per-query table (.csv, .tsv, .jsonl, .json, .parquet).")],
    new: Annotated[Optional[Path], o.path_option(o.INPUT, "--new", "The changed side, same kind as --base; paired with it by query id.")] = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With runs: graded qrels 1–5 (or binary) to score both runs with the evaluate metrics.")] = None,
    metrics: Annotated[Optional[str], o.text_option(o.STATISTICS, "--metrics", "Runs: comma list of METRIC@K from the evaluate registry (default ndcg@10,ra_nwg@10,recall@20); tables: metric columns (default: every numeric column); graded files: grade.")] = None,
    id_col: Annotated[str, o.retold(o.IdCol, "Tables: the query-id column that pairs the two sides.")] = "query_id",
    max_drop: Annotated[float, o.float_option(o.STATISTICS, "--max-drop", "Margin: a drop of Δ up to this much is not a regression (metric units).", 0.0, 1000.0)] = 0.01,
    alpha: Annotated[float, o.float_option(o.STATISTICS, "--alpha", "Error level of each one-sided decision; intervals are two-sided at 1 − 2α.", 0.0, 0.5, lo_open=True, hi_open=True)] = 0.05,
    test: Annotated[PairedTest, o.option(o.STATISTICS, "--test", help="Paired test: t (scipy ttest_rel), randomization (sign flips: exact up to 20 queries, else 10,000 seeded draws) or bootstrap (2,000 paired percentile resamples).", metavar=o.choices_metavar(PairedTest))] = PairedTest.t,
    correction: Annotated[Correction, o.option(o.STATISTICS, "--correction", help="Family correction of the p-values across metrics: holm, bh (Benjamini–Hochberg) or none.", metavar=o.choices_metavar(Correction))] = Correction.holm,
    seed: o.Seed = 0,
    per_query: Annotated[Optional[Path], o.retold(o.PerQuery, "Write one JSON line per query: each metric's Δ = new − base, and its two values.")] = None,
    summary_md: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--summary-md", "Write the Markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set).")] = None,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result as JSON (with its run record).")] = None,
    strict: Annotated[bool, o.option(o.STATISTICS, "--strict", help="Fail the gate (exit 1) on an inconclusive metric too.")] = False,
    allow_missing: Annotated[bool, o.option(o.INPUT, "--allow-missing", help="Drop queries found on one side only (counted in the output) instead of refusing.")] = False,
    plan: Annotated[bool, o.option(o.STATISTICS, "--plan", help="Also report the queries needed to detect a drop of --mde with --power, and the drop detectable now (--new optional: one run gives the unpaired bound).")] = False,
    mde: Annotated[float, o.float_option(o.STATISTICS, "--mde", "With --plan: the drop to detect (metric units, above --max-drop).", 0.0, 1000.0, lo_open=True)] = 0.02,
    power: Annotated[float, o.float_option(o.STATISTICS, "--power", "Power wanted: of the plan, and of the queries an inconclusive metric needs.", 0.0, 1.0, lo_open=True, hi_open=True)] = 0.8,
    fields: o.Fields = None,
    score_field: o.ScoreField = None,
    qrels_format: o.QrelsFormat = None,
    run_format: o.RunFormat = None,
    by_document: o.ByDocument = False,
) -> None:
    """Paired regression gate: per metric Δ = new − base with its interval, p-value, d_z and a decision
    (regression, no regression, inconclusive), corrected across metrics; exit 0 pass, 1 fail, 2 bad input.
    --plan: queries needed (Sakai's topic set size design). Methods: docs/methods.md#regression-gate-compare."""
    from rich.console import Console

    from ragdiag.commands.compare import CompareRequest, GateOptions, run
    from ragdiag.report.compare_report import render

    options = GateOptions(test.value, correction.value, alpha, max_drop, seed, plan, mde, power, strict)
    with o.reading_of(fields, score_field=score_field, qrels=qrels_format, run=run_format,
                      by_document=by_document).activate():
        result = run(CompareRequest(base, new, qrels, metrics, id_col, options, allow_missing, out, per_query, summary_md))
    render(result, Console(width=max(Console().width, 80)))
    for label, path in (("result", out), ("per-query differences", per_query), ("summary", summary_md)):
        if path is not None:
            typer.echo(f"wrote {path} ({label})", err=True)
    raise typer.Exit(result.exit_code)
