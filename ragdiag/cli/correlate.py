"""``ragdiag correlate``: which retrieval measure predicts the LLM grade (paper 003, §3)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p

# kept importable under their old names
Segmentation = p.Segmentation
Format = p.OutputFormat


class GradeBinning(str, enum.Enum):
    ratio = "ratio"
    K = "K"


def correlate(
    dataset: Annotated[Optional[p.Dataset], typer.Option("--dataset", metavar=p.choices_metavar(p.Dataset), help="primer-ai/retrieval-response from the Hugging Face hub; the bundled sample (simulated grades) when the hub is unreachable.")] = None,
    graded: Annotated[Optional[Path], p.path_option("--graded", "A local samples_graded file (JSON list or JSONL, .gz allowed; or .parquet, read columnar) instead of --dataset.")] = None,
    segments: p.Segments = p.Segmentation.ratio,
    min_samples: Annotated[Optional[int], p.int_option("--min-samples", "Drop segments with fewer rows (default 300 as the paper; 10 with --table).", 1, 10**9)] = None,
    measures: p.Measures = "F,E,T,nDCG",
    corr: Annotated[Optional[str], p.text_option("--corr", "Correlation kinds to show, comma list of spearman, pearson, kendall_b, kendall_c (default: all four computed, Spearman shown; with --table: Spearman only); the first drives the verdict and the plot.", callback=p.checked_by("ragdiag.metrics.analysis", "parse_kinds"))] = None,
    alpha_grid: p.AlphaGrid = "l350^0.95",
    xk: p.Xk = 2.0,
    exact_ties: Annotated[bool, typer.Option("--exact-ties", help="Tie measure values equal to 12 significant digits (default: float64 bits, as the paper).")] = False,
    bootstrap: p.Bootstrap = 0,
    seed: p.Seed = p.DEFAULT_SEED,
    compare: p.Compare = None,
    by: p.By = None,
    delta: p.Deltas = p.DEFAULT_DELTAS,
    fmt: p.FormatOpt = None,
    out: Annotated[Optional[Path], p.path_option("--out", "Write the result here; its suffix picks the format (.json, .csv, .txt/.md = table; else JSON) unless --format is given.")] = None,
    plot: Annotated[Optional[Path], p.path_option("--plot", "Heatmap PNG (.png): segments × measures, cells = max correlation.")] = None,
    grade_plot: Annotated[Optional[Path], p.path_option("--grade-plot", "Grade-distribution heatmaps PNG (paper 003, Figs 2–4): per embedder and subset, grades 1–5 × bins (--grade-by), each column summing to 1; bins need --min-samples rows. Adds 'grade_distribution' to the JSON.")] = None,
    grade_by: Annotated[GradeBinning, typer.Option("--grade-by", metavar=p.choices_metavar(GradeBinning), help="Bins of --grade-plot: ratio (K/Np rounded to 0.1, as the paper's segments) or K.")] = GradeBinning.ratio,
    compare_plot: Annotated[Optional[Path], p.path_option("--compare-plot", "With --compare A,B and ratio segments: heatmap PNG of max corr(A) − max corr(B) per K/Np and embedder, one panel per subset (paper 003, Figs 7–18).")] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Use the bundled sample without trying the hub.")] = False,
    no_fallback: Annotated[bool, typer.Option("--no-fallback", help="Fail instead of using the bundled sample when the hub is unreachable.")] = False,
    hf_repo: Annotated[Optional[str], p.text_option("--hf-repo", "Hub dataset (or local folder of the same layout) instead of primer-ai/retrieval-response.")] = None,
    metric_table: Annotated[Optional[Path], p.path_option("--table", "Your own per-query table (.csv, .tsv, .jsonl, .json, .parquet) instead of --dataset/--graded.")] = None,
    grade_col: Annotated[str, p.text_option("--grade-col", "With --table: the answer-grade column.")] = "grade",
    measure_cols: Annotated[Optional[str], p.text_option("--measure-cols", "With --table: comma list of metric columns, e.g. ndcg@10,recall@10.")] = None,
    group_col: Annotated[Optional[str], p.text_option("--group-col", "With --table: correlate within each value of this column.")] = None,
    id_col: Annotated[Optional[str], p.text_option("--id-col", "With --table: bootstrap resamples these ids (all their rows together) instead of rows.")] = None,
    keep_degenerate: p.KeepDegenerate = False,
    degenerate_patterns: p.DegeneratePatterns = None,
    long_answer_ratio: p.LongAnswerRatio = p.DEFAULT_LONG_ANSWER_RATIO,
    complete_cases: Annotated[bool, typer.Option("--complete-cases", help="Keep only the queries graded at every K (missing grades are not missing at random: a failed call is likelier at large K); the verdict says which rows it used.")] = False,
) -> None:
    """Correlate retrieval measures with answer grades, per segment, maximising over α (paper 003).

    Starts with the verdict (which measure predicts the grade best per subset and narrow/wide
    side) and one line of advice, then, per segment and measure, the maximum correlation over the
    α grid and the first α reaching it; with --bootstrap, 95% intervals.

    Measures (n = relevant passages in the top K, K = passages given to the generator, Np = all
    relevant passages): F(α) = n/(α·K + (1−α)·Np), α = 0 recall, α = 1 precision; E = F with Np
    estimated from the ranking (relevant passages in the top x·K); T(α) = (1−α)·n − α·(K−n)/K;
    nDCG@K; P = n/K (precision@K); R = n/Np (recall@K).
    """
    from ragdiag.io.paths import check_paths

    source = metric_table if metric_table is not None else graded
    check_paths(inputs={"--table" if metric_table is not None else "--graded": source,
                        "--degenerate-patterns": degenerate_patterns},
                outputs={"--out": out}, plots={"--plot": plot, "--grade-plot": grade_plot, "--compare-plot": compare_plot})
    if metric_table is not None:
        from ragdiag.cli.correlate_table import correlate_metric_table
        from ragdiag.errors import RagdiagError

        clash = [flag for flag, given in (
            ("--dataset", dataset), ("--graded", graded), ("--by", by), ("--exact-ties", exact_ties),
            ("--segments", segments is not p.Segmentation.ratio), ("--measures", measures != "F,E,T,nDCG"),
            ("--alpha-grid", alpha_grid != "l350^0.95"), ("--xk", xk != 2.0), ("--delta", delta != p.DEFAULT_DELTAS),
            ("--grade-plot", grade_plot), ("--grade-by", grade_by is not GradeBinning.ratio), ("--compare-plot", compare_plot),
            ("--offline", offline), ("--no-fallback", no_fallback), ("--hf-repo", hf_repo),
            ("--keep-degenerate", keep_degenerate), ("--degenerate-patterns", degenerate_patterns),
            ("--long-answer-ratio", long_answer_ratio != p.DEFAULT_LONG_ANSWER_RATIO),
            ("--complete-cases", complete_cases)) if given]
        if clash:
            raise RagdiagError(f"{clash[0]} does not apply with --table (your table's columns are correlated as they are)")

        correlate_metric_table(metric_table, grade_col, measure_cols, group_col, id_col, corr, min_samples, bootstrap,
                               seed, compare, fmt.value if fmt else None, out, plot)
        return
    from rich.console import Console

    from ragdiag.data.loaders import load_graded
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.io.lists import parse_deltas
    from ragdiag.metrics.analysis import CorrelateOptions, parse_kinds
    from ragdiag.metrics.correlate_job import run_correlation
    from ragdiag.metrics.measure_tables import parse_measures
    from ragdiag.options import parse_pair
    from ragdiag.report.correlate_report import print_report, render_text, write_heatmap
    from ragdiag.report.correlation_file import write_correlation
    from ragdiag.report.coverage_text import verdict_basis
    from ragdiag.report.progress import progress_over

    opts = CorrelateOptions(
        segments=segments.value, min_samples=p.DEFAULT_MIN_SAMPLES if min_samples is None else min_samples,
        measures=parse_measures(measures), kinds=parse_kinds(corr or "spearman,pearson,kendall_b,kendall_c"),
        alpha_grid=alpha_grid, xk=xk, exact_ties=exact_ties, bootstrap=bootstrap, seed=seed,
        compare=parse_pair(compare) if compare else None, keep_degenerate=keep_degenerate,
    )
    if compare_plot is not None and not opts.compare:
        from ragdiag.errors import RagdiagError

        raise RagdiagError("--compare-plot needs --compare A,B (the two measures to difference)")
    stderr = Console(stderr=True)
    table = load_graded(graded, dataset.value if dataset else None, offline=offline, fallback=not no_fallback,
                        hf_repo=hf_repo, gate=make_gate(degenerate_patterns, long_answer_ratio))
    if table.source.notice:
        stderr.print(f"note: {table.source.notice}", style="yellow")
    report = run_correlation(table, opts, by_config=by is p.ByView.config, deltas=parse_deltas(delta),
                             progress=progress_over(stderr), complete_cases=complete_cases)
    basis = verdict_basis(report)
    if basis is not None and basis[1] and fmt is not p.OutputFormat.table:
        stderr.print(f"warning: {basis[0]}", style="yellow", highlight=False)  # the table shows it before the verdict
    report["meta"]["shown_kinds"] = list(opts.kinds) if corr else list(opts.kinds[:1])
    if grade_plot is not None:
        from ragdiag.metrics.grade_distribution import grade_distribution

        distribution = grade_distribution(table, grade_by.value, opts.min_samples)
        report["grade_distribution"] = distribution.to_json()
    if out is not None:
        write_correlation(report, out, fmt.value if fmt else None, inputs=[graded])
    if plot is not None:
        write_heatmap(report, plot)
    if grade_plot is not None or compare_plot is not None:
        from ragdiag.report.paper003_figures import (
            write_comparison_heatmap,
            write_grade_heatmaps,
        )

        note = "SIMULATED GRADES: bundled sample" if report["meta"].get("simulated_grades") else None
        if grade_plot is not None:
            write_grade_heatmaps(distribution, grade_plot, note)
        if compare_plot is not None:
            write_comparison_heatmap(report, compare_plot, report["meta"]["shown_kinds"][0])
    if fmt is None or fmt is p.OutputFormat.table:
        print_report(report, Console())
    elif out is None:
        typer.echo(render_text(report, fmt.value), nl=False)
