"""``ragdiag correlate``: which retrieval measure predicts the LLM grade (paper 003, §3)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from ragdiag.errors import RagdiagError


class Segmentation(str, Enum):
    ratio = "ratio"
    nw = "nw"
    pooled = "pooled"


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


def correlate(
    dataset: Optional[str] = typer.Option(None, "--dataset", help="msmarco, arxiv, hotpotqa-p, hotpotqa-s, nq or all: primer-ai/retrieval-response from the Hugging Face hub; the bundled sample (simulated grades) when the hub is unreachable."),
    graded: Optional[Path] = typer.Option(None, "--graded", help="A local samples_graded file (JSON list or JSONL, .gz allowed) instead of --dataset."),
    segments: Segmentation = typer.Option(Segmentation.ratio, "--segments", help="ratio: E^subset^KtoN^round(K/Np,1); nw: E^subset^1 when Np ≤ K (wide) else 0; pooled: E^subset, all rows together (small sets)."),
    min_samples: Optional[int] = typer.Option(None, "--min-samples", min=1, help="Drop segments with fewer rows (default 300 as the paper; 10 with --table)."),
    measures: str = typer.Option("F,E,T,nDCG", "--measures", help="Comma list of F, E, T, nDCG, P, R."),
    corr: Optional[str] = typer.Option(None, "--corr", help="Correlation kinds to show (default: all four computed, Spearman shown); the first drives the verdict and the plot."),
    alpha_grid: str = typer.Option("l350^0.95", "--alpha-grid", help="lN^B (0, 1, B^i and 1−B^i for i ≤ N) or a0^a1^step."),
    xk: float = typer.Option(2.0, "--xk", help="E estimates Np by the positives in the top round(xk·K)."),
    exact_ties: bool = typer.Option(False, "--exact-ties", help="Tie measure values equal to 12 significant digits (default: float64 bits, as the paper)."),
    bootstrap: int = typer.Option(0, "--bootstrap", min=0, help="Bootstrap resamples of query ids for 95% intervals (0 = off)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap resampling."),
    compare: Optional[str] = typer.Option(None, "--compare", help="Two measures, e.g. T,F: paired difference of their maxima per segment."),
    by: Optional[str] = typer.Option(None, "--by", help="config: system-level view per (E, subset, K)."),
    delta: str = typer.Option("0.1,0.3,0.5", "--delta", help="δ values of Robustness-δ@K for --by config."),
    fmt: Format = typer.Option(Format.table, "--format", help="What to print: a table, JSON or CSV."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the result here (--format; with table: .json/.csv by suffix, else text)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Heatmap PNG: segments × measures, cells = max correlation."),
    offline: bool = typer.Option(False, "--offline", help="Use the bundled sample without trying the hub."),
    no_fallback: bool = typer.Option(False, "--no-fallback", help="Fail instead of using the bundled sample when the hub is unreachable."),
    hf_repo: Optional[str] = typer.Option(None, "--hf-repo", help="Hub dataset (or local folder of the same layout) instead of primer-ai/retrieval-response."),
    metric_table: Optional[Path] = typer.Option(None, "--table", help="Your own per-query table (.csv, .tsv, .jsonl, .json, .parquet) instead of --dataset/--graded."),
    grade_col: str = typer.Option("grade", "--grade-col", help="With --table: the answer-grade column."),
    measure_cols: Optional[str] = typer.Option(None, "--measure-cols", help="With --table: comma list of metric columns, e.g. ndcg@10,recall@10."),
    group_col: Optional[str] = typer.Option(None, "--group-col", help="With --table: correlate within each value of this column."),
    id_col: Optional[str] = typer.Option(None, "--id-col", help="With --table: bootstrap resamples these ids (all their rows together) instead of rows."),
) -> None:
    """Correlate retrieval measures with answer grades, per segment, maximising over α (paper 003).

    Prints, per segment and measure, the maximum correlation over the α grid and the first α
    reaching it; with --bootstrap, 95% intervals; and ends with which measure predicts the grade
    best per subset and narrow/wide side.
    """
    if metric_table is not None:
        from ragdiag.cli.correlate_table import correlate_metric_table

        correlate_metric_table(metric_table, grade_col, measure_cols, group_col, id_col, corr, min_samples, bootstrap,
                               seed, compare, fmt.value, out, plot)
        return
    from rich.console import Console

    from ragdiag.metrics.analysis import CorrelateOptions, parse_kinds
    from ragdiag.data.loaders import load_graded
    from ragdiag.io.writer import guard_outputs
    from ragdiag.metrics.correlate_job import run_correlation
    from ragdiag.metrics.measure_tables import parse_measures
    from ragdiag.options import parse_deltas
    from ragdiag.report.correlate_report import print_report, render_text, write_heatmap
    from ragdiag.report.correlation_file import write_correlation
    from ragdiag.report.progress import progress_over

    pair = None
    if compare:
        pair = tuple(m.strip() for m in compare.split(","))
        if len(pair) != 2:
            raise RagdiagError(f"--compare '{compare}': expected two measures, e.g. T,F")
    if by not in (None, "config"):
        raise RagdiagError(f"--by '{by}': only 'config' is supported")
    opts = CorrelateOptions(
        segments=segments.value, min_samples=300 if min_samples is None else min_samples, measures=parse_measures(measures),
        kinds=parse_kinds(corr or "spearman,pearson,kendall_b,kendall_c"),
        alpha_grid=alpha_grid, xk=xk, exact_ties=exact_ties, bootstrap=bootstrap, seed=seed, compare=pair,
    )
    stderr = Console(stderr=True)
    guard_outputs([out, plot], [graded])
    table = load_graded(graded, dataset, offline=offline, fallback=not no_fallback, hf_repo=hf_repo)
    if table.source.notice:
        stderr.print(f"note: {table.source.notice}", style="yellow")
    report = run_correlation(table, opts, by_config=by == "config", deltas=parse_deltas(delta),
                              progress=progress_over(stderr))
    report["meta"]["shown_kinds"] = list(opts.kinds) if corr else list(opts.kinds[:1])
    if out is not None:
        write_correlation(report, out, fmt.value, inputs=[graded])
    if plot is not None:
        write_heatmap(report, plot)
    if fmt is Format.table:
        print_report(report, Console(width=max(Console().width, 120)))
    elif out is None:
        typer.echo(render_text(report, fmt.value), nl=False)
