"""``ragdiag correlate``: which retrieval measure predicts the LLM grade (paper 003, §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.commands.correlate import CorrelateRequest, GradeBinning, run
from ragdiag.measures import registry as measure_registry

# kept importable under their old names
Segmentation = o.Segmentation
Format = o.OutputFormat


def correlate(
    ctx: typer.Context,
    dataset: Annotated[Optional[o.Dataset], o.retold(o.DatasetOpt, "primer-ai/retrieval-response from the Hugging Face hub; the bundled sample (simulated grades) when the hub is unreachable.")] = None,
    graded: o.Graded = None,
    segments: o.Segments = o.Segmentation.ratio,
    min_samples: Annotated[Optional[int], o.retold(o.MinSamples, "Drop segments with fewer rows (default 300 as the paper; 10 with --table).")] = None,
    measures: o.Measures = measure_registry.DEFAULT_MEASURES_TEXT,
    corr: Annotated[Optional[str], o.text_option(o.STATISTICS, "--corr", "Correlation kinds to show, comma list of spearman, pearson, kendall_b, kendall_c (default: all four computed, Spearman shown; with --table: Spearman only); the first drives the verdict and the plot.", callback=o.checked_by("ragdiag.metrics.analysis", "parse_kinds"))] = None,
    alpha_grid: o.AlphaGrid = "l350^0.95",
    xk: o.Xk = 2.0,
    exact_ties: Annotated[bool, o.option(o.STATISTICS, "--exact-ties", help="The default, stated: measure values equal to 12 significant digits tie (values equal in exact arithmetic, e.g. F of rows with the same recall and K/Np).")] = False,
    float_ties: Annotated[bool, o.option(o.STATISTICS, "--float-ties", help="Rank the float64 values as they are: reproduces the paper's code, including its float-noise ties (values equal in exact arithmetic that differ in the last bit are ordered by that bit).")] = False,
    bootstrap: o.Bootstrap = 0,
    seed: o.Seed = o.DEFAULT_SEED,
    compare: o.Compare = None,
    by: o.By = None,
    delta: o.Deltas = o.DEFAULT_DELTAS,
    fmt: o.FormatOpt = None,
    out: o.Out = None,
    quiet: o.Quiet = False,
    plot: Annotated[Optional[Path], o.with_note(o.Plot, "A heatmap: segments × measures, cells = max correlation.")] = None,
    grade_plot: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--grade-plot", "Grade-distribution heatmaps PNG (paper 003, Figs 2–4): per embedder and subset, grades 1–5 × bins (--grade-by), each column summing to 1; bins need --min-samples rows. Adds 'grade_distribution' to the JSON.")] = None,
    grade_by: Annotated[GradeBinning, o.option(o.OUTPUT, "--grade-by", metavar=o.choices_metavar(GradeBinning), help="Bins of --grade-plot: ratio (K/Np rounded to 0.1, as the paper's segments) or K.")] = GradeBinning.ratio,
    compare_plot: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--compare-plot", "With --compare A,B and ratio segments: heatmap PNG of max corr(A) − max corr(B) per K/Np and embedder, one panel per subset (paper 003, Figs 7–18).")] = None,
    offline: Annotated[bool, o.option(o.INPUT, "--offline", help="Use the bundled sample without trying the hub.")] = False,
    no_fallback: Annotated[bool, o.option(o.INPUT, "--no-fallback", help="Fail instead of using the bundled sample when the hub is unreachable.")] = False,
    hf_repo: Annotated[Optional[str], o.text_option(o.INPUT, "--hf-repo", "Hub dataset (or local folder of the same layout) instead of primer-ai/retrieval-response.")] = None,
    metric_table: Annotated[Optional[Path], o.path_option(o.INPUT, "--table", "Your own per-query table (.csv, .tsv, .jsonl, .json, .parquet) instead of --dataset/--graded.")] = None,
    grade_col: Annotated[str, o.text_option(o.INPUT, "--grade-col", "With --table: the answer-grade column.")] = "grade",
    measure_cols: Annotated[Optional[str], o.text_option(o.INPUT, "--measure-cols", "With --table: comma list of metric columns, e.g. ndcg@10,recall@10.")] = None,
    group_col: Annotated[Optional[str], o.text_option(o.STATISTICS, "--group-col", "With --table: correlate within each value of this column.")] = None,
    id_col: Annotated[Optional[str], o.retold(o.IdCol, "With --table: bootstrap resamples these ids (all their rows together) instead of rows.")] = None,
    keep_degenerate: o.KeepDegenerate = False,
    degenerate_patterns: o.DegeneratePatterns = None,
    long_answer_ratio: o.LongAnswerRatio = o.DEFAULT_LONG_ANSWER_RATIO,
    complete_cases: Annotated[bool, o.retold(o.CompleteCases, "Keep only the queries graded at every K (missing grades are not missing at random: a failed call is likelier at large K); the verdict says which rows it used.")] = False,
    table_format: o.PerQueryFormat = None,
) -> None:
    """Correlate retrieval measures with answer grades, per segment, maximising over α (paper 003).

    Starts with the verdict (which measure predicts the grade best per subset and narrow/wide
    side) and one line of advice, then, per segment and measure, the maximum correlation over the
    α grid and the first α reaching it; with --bootstrap, 95% intervals.

    {measures}
    """
    from ragdiag.io.lists import parse_deltas, parse_pair
    from ragdiag.report.correlate_report import print_report, render_text
    from ragdiag.report.coverage_text import verdict_basis

    request = CorrelateRequest(
        dataset=dataset.value if dataset else None, graded=graded, segments=segments.value, min_samples=min_samples,
        measures=measure_registry.parse_measures(measures), corr=corr, alpha_grid=alpha_grid, xk=xk,
        exact_ties=not float_ties, bootstrap=bootstrap, seed=seed, compare=parse_pair(compare) if compare else None,
        by_config=by is o.ByView.config, deltas=parse_deltas(delta), fmt=fmt.value if fmt else None, out=out,
        plot=plot, grade_plot=grade_plot, grade_by=grade_by, compare_plot=compare_plot, offline=offline,
        no_fallback=no_fallback, hf_repo=hf_repo, table=metric_table, grade_col=grade_col,
        measure_cols=tuple(c.strip() for c in measure_cols.split(",") if c.strip()) if measure_cols else None,
        group_col=group_col, id_col=id_col, keep_degenerate=keep_degenerate, degenerate_patterns=degenerate_patterns,
        long_answer_ratio=long_answer_ratio, complete_cases=complete_cases, given=given_flags(ctx),
    )
    with o.reading_of(table=table_format).activate():
        result = run(request, on_notice=lambda notice: _console(stderr=True).print(f"note: {notice}", style="yellow"))
    basis = verdict_basis(result)
    from ragdiag.cli.show import fmt_value, show_result
    from ragdiag.io.out_format import screen_format

    if basis is not None and basis[1] and screen_format(fmt_value(fmt), out, quiet) != "table":
        _console(stderr=True).print(f"warning: {basis[0]}", style="yellow", highlight=False)  # the table shows it first
    from ragdiag.commands.provenance import sidecar_manifests

    sidecars = sidecar_manifests(result.meta.source)  # the judge named beside the graded file
    show_result(out, fmt, quiet, lambda: print_report(result, _console(), sidecars=sidecars),
                lambda shown: render_text(result, shown, sidecars=sidecars))
    if graded is None and metric_table is None and screen_format(fmt_value(fmt), out, quiet) == "table":
        from ragdiag.report.correlate_guide import OWN_DATA_LINE

        _console().print(OWN_DATA_LINE, style="bold", highlight=False)  # the next step after the bundled sample


def _console(stderr: bool = False) -> Any:
    """A rich console on stdout (or stderr), made when something is printed through it (rich is not
    imported for a run that prints JSON)."""
    from rich.console import Console

    return Console(stderr=stderr)


correlate.__doc__ = (correlate.__doc__ or "").replace("{measures}", measure_registry.MEASURES_DEFINED)


def given_flags(ctx: typer.Context) -> frozenset[str]:
    """The flags given on the command line or through the environment (not left at their default)."""
    return frozenset(param.opts[0] for param in ctx.command.params
                     if getattr(ctx.get_parameter_source(param.name), "name", None) in ("COMMANDLINE", "ENVIRONMENT"))
