"""``ragdiag evaluate``: graded utility (RA-nWG, PROC, %PROC, N-Recall, Hit, Harm, Unjudged) and
standard metrics of one or more runs, intervals, pairwise comparisons and stage attribution."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.options import (
    FLOAT,
    INTEGER,
    TEXT,
    FormatOpt,
    OutputFormat,
    Seed,
    finite_float,
)
from ragdiag.errors import RagdiagError
from ragdiag.io.lists import parse_ks
from ragdiag.measures.registry import METRIC_NAMES, metrics_help, parse_metrics


def _unit(flag: str, help_text: str) -> Any:
    return o.float_option(o.STATISTICS, flag, help_text, 0.0, 1.0)


def evaluate(
    run: Annotated[list[Path], o.retold(o.Run, "Run: ragdiag run.jsonl or a TREC run file; repeat to compare.")],
    qrels: Annotated[Path, o.retold(o.Qrels, "Graded qrels 1–5: BEIR TSV (with or without header) or TREC; binary 0/1 is read as 1 and 5.")],
    k: Annotated[str, o.option(o.RETRIEVAL, "--ks", "--k", help="Cut-offs K, comma-separated (--k is the same).", metavar=TEXT)] = "10,20,30",
    pool_depth: Annotated[int, o.option(o.STATISTICS, "--pool-depth", help="Candidate pool C for PROC: the run's top N.", min=1, max=1_000_000, metavar=INTEGER)] = 100,
    metrics: Annotated[str, o.option(o.STATISTICS, "--metrics", help=metrics_help(), metavar=TEXT)] = ",".join(METRIC_NAMES),
    gold: Annotated[int, o.option(o.STATISTICS, "--gold", help="Grade counted as useful (Hit, attribution, relevance of recall/mrr/map/precision).", min=2, max=5, metavar=INTEGER)] = 4,
    harm_max: Annotated[int, o.option(o.STATISTICS, "--harm-max", help="Judged passages with grade ≤ this count as harm.", min=1, max=4, metavar=INTEGER)] = 2,
    alpha: Annotated[float, o.option(o.STATISTICS, "--alpha", help="Rarity exponent α (0 turns rarity off). Range [0, 10].", metavar=FLOAT, callback=finite_float(0.0, 10.0))] = 1.0,
    cap4: Annotated[float, _unit("--cap4", "Cap c4 on the grade-4 weight.")] = 0.8,
    cap3: Annotated[float, _unit("--cap3", "Cap c3 on the grade-3 weight.")] = 0.4,
    fallback4: Annotated[float, _unit("--fallback4", "Grade-4 weight f4 when the pool has no grade 5.")] = 0.8,
    fallback3: Annotated[float, _unit("--fallback3", "Grade-3 weight f3 when the pool has no grade 5.")] = 0.4,
    bootstrap: o.Bootstrap = 1000,
    seed: Seed = 0,
    answers: Annotated[Optional[Path], o.retold(o.Answers, "graded.json (or graded.parquet) from 'ragdiag grade' (id = query id, E = run name, K = cut-off): stage attribution.")] = None,
    fmt: FormatOpt = None,
    quiet: o.Quiet = False,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result here instead of stdout; its suffix picks the format (.json, .csv, .txt/.md = table; else JSON) unless --format is given.")] = None,
    per_query: Annotated[Optional[Path], o.retold(o.PerQuery, "JSONL: one row per run, query and K with every metric and the stage.")] = None,
    plot: Annotated[Optional[Path], o.retold(o.Plot, "PNG: RA-nWG@K beside PROC@K per run, with intervals.")] = None,
    fields: o.Fields = None,
    score_field: o.ScoreField = None,
    qrels_format: o.QrelsFormat = None,
    run_format: o.RunFormat = None,
    by_document: o.ByDocument = False,
) -> None:
    """Graded utility metrics and ceilings (docs/methods.md#8-graded-utility-metrics) next to ir_measures' standard metrics, per run."""
    from ragdiag.commands.evaluate import EvaluateParams, EvaluateRequest, RarityWeights
    from ragdiag.commands.evaluate import run as evaluate_run
    from ragdiag.report import evaluate_report as report

    if not run:
        raise RagdiagError("give at least one --run")
    params = EvaluateParams(parse_ks(k, "--k"), pool_depth, parse_metrics(metrics),
                            gold, harm_max, RarityWeights(alpha, cap4, cap3, fallback4, fallback3), bootstrap, seed)
    with o.reading_of(fields, score_field=score_field, qrels=qrels_format, run=run_format,
                      by_document=by_document).activate():
        result = evaluate_run(EvaluateRequest(run, qrels, params, answers, out, fmt.value if fmt else None, per_query, plot))
    from rich.console import Console

    from ragdiag.cli.show import show_result

    show_result(out, fmt, quiet, lambda: report.render_table(result, Console()),
                lambda shown: report.json_text(result) if shown == OutputFormat.json.value else report.csv_text(result))
    for label, path in (("per-query rows", per_query), ("plot", plot)):
        if path is not None:
            typer.echo(f"wrote {label} to {path}", err=True)
