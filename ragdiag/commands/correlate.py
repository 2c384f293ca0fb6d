"""``ragdiag correlate``: which retrieval measure predicts the LLM grade (paper 003, §3).

``run(request)`` checks the paths and options first (no work on a bad one), loads the graded
samples (``--dataset`` / ``--graded``) or the user's per-query metric table (``--table``), correlates
(:mod:`ragdiag.metrics.correlate_job`, :mod:`ragdiag.metrics.table_correlation`), writes ``--out`` and every PNG through
:mod:`ragdiag.io.writer`, and returns the stamped :class:`CorrelateResult`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ragdiag.errors import RagdiagError
from ragdiag.measures.registry import DEFAULT_MEASURES
from ragdiag.results.correlate import CorrelateResult

__all__ = ["CorrelateRequest", "CorrelateResult", "GradeBinning", "TABLE_CLASHES", "run"]

PAPER_MIN_SAMPLES = 300  # segments with fewer rows are dropped (paper 003)
DEFAULT_TABLE_MIN_SAMPLES = 10
PROGRESS_MIN_ITEMS = 20  # fewer cells than this: no bar (short work stays silent)


class GradeBinning(str, enum.Enum):
    ratio = "ratio"
    K = "K"


# The options that mean nothing with --table, in the order the error names the first one given.
TABLE_CLASHES = ("--dataset", "--graded", "--by", "--exact-ties", "--float-ties", "--segments", "--measures",
                 "--alpha-grid", "--xk", "--delta", "--grade-plot", "--grade-by", "--compare-plot", "--offline", "--no-fallback", "--hf-repo",
                 "--keep-degenerate", "--degenerate-patterns", "--long-answer-ratio", "--complete-cases")


@dataclass
class CorrelateRequest:
    """Every option of ``ragdiag correlate``, parsed. ``given``: the flags the user gave (``--table``
    refuses the ones of :data:`TABLE_CLASHES`)."""

    dataset: str | None = None
    graded: Path | None = None
    segments: str = "ratio"
    min_samples: int | None = None  # None: 300 (the paper), 10 with --table
    measures: tuple[str, ...] = DEFAULT_MEASURES
    corr: str | None = None  # comma list of correlation kinds; None: all four computed, Spearman shown
    alpha_grid: str = "l350^0.95"
    xk: float = 2.0
    exact_ties: bool = True  # False: --float-ties
    bootstrap: int = 0
    seed: int = 0
    compare: tuple[str, str] | None = None
    by_config: bool = False
    deltas: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    fmt: str | None = None
    out: Path | None = None
    plot: Path | None = None
    grade_plot: Path | None = None
    grade_by: GradeBinning = GradeBinning.ratio
    compare_plot: Path | None = None
    offline: bool = False
    no_fallback: bool = False
    hf_repo: str | None = None
    table: Path | None = None
    grade_col: str = "grade"
    measure_cols: tuple[str, ...] | None = None
    group_col: str | None = None
    id_col: str | None = None
    keep_degenerate: bool = False
    degenerate_patterns: Path | None = None
    long_answer_ratio: float = 5.0
    complete_cases: bool = False
    given: frozenset[str] = field(default_factory=frozenset)


def graded_source(request: CorrelateRequest) -> Path:
    """The graded file read: ``--graded``, else the bundled sample, which ``--dataset`` falls back to
    (so that no output may overwrite it either)."""
    from ragdiag.data.loaders import bundled_sample_path

    return request.graded if request.graded is not None else bundled_sample_path()


def check_request(request: CorrelateRequest) -> None:
    """Paths (outputs never an input, plots .png) and option combinations, before any work."""
    from ragdiag.io.paths import check_paths

    source_flag = "--table" if request.table is not None else "--graded" if request.graded is not None else "--dataset"
    check_paths(inputs={source_flag: request.table if request.table is not None else graded_source(request),
                        "--degenerate-patterns": request.degenerate_patterns},
                outputs={"--out": request.out},
                plots={"--plot": request.plot, "--grade-plot": request.grade_plot, "--compare-plot": request.compare_plot})
    if {"--exact-ties", "--float-ties"} <= request.given:
        raise RagdiagError("--exact-ties (the default) and --float-ties contradict each other: give one")
    if request.table is not None:
        clash = next((flag for flag in TABLE_CLASHES if flag in request.given), None)
        if clash:
            raise RagdiagError(f"{clash} does not apply with --table (your table's columns are correlated as they are)")


T = TypeVar("T")


def progress_over_items(items: list[T], label: str) -> Iterable[T]:
    """``items`` with progress on stderr (:func:`ragdiag.io.progress.progress_reporter`); short lists as they are."""
    if len(items) < PROGRESS_MIN_ITEMS:
        return items

    def reported() -> Iterable[T]:
        from ragdiag.io.progress import progress_reporter

        with progress_reporter(label, len(items)) as bar:
            for item in items:
                yield item
                bar.advance()

    return reported()


def run(request: CorrelateRequest, progress: Callable[[list[Any], str], Iterable[Any]] = progress_over_items,
        on_notice: Callable[[str], None] | None = None) -> CorrelateResult:
    """Check, compute, write (``--out``, ``--plot``, ``--grade-plot``, ``--compare-plot``), return the result.
    ``on_notice`` hears, before the computation, why the source is not the one asked for (e.g. the
    bundled sample when the hub is unreachable); the result's ``meta.notice`` keeps it too."""
    check_request(request)
    if request.table is not None:
        return run_table(request, request.table)
    from ragdiag.data.loaders import load_graded
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.io.run_record import stamp_record, start_run
    from ragdiag.metrics.analysis import CorrelateOptions, parse_kinds
    from ragdiag.metrics.correlate_job import gate_prompts, run_correlation
    from ragdiag.metrics.correlation import KINDS

    opts = CorrelateOptions(
        segments=request.segments, min_samples=PAPER_MIN_SAMPLES if request.min_samples is None else request.min_samples,
        measures=request.measures, kinds=parse_kinds(request.corr) if request.corr else KINDS,
        alpha_grid=request.alpha_grid, xk=request.xk, exact_ties=request.exact_ties, bootstrap=request.bootstrap,
        seed=request.seed, compare=request.compare, keep_degenerate=request.keep_degenerate,
    )
    if request.compare_plot is not None and not opts.compare:
        raise RagdiagError("--compare-plot needs --compare A,B (the two measures to difference)")
    table = load_graded(request.graded, request.dataset, offline=request.offline, fallback=not request.no_fallback,
                        hf_repo=request.hf_repo, gate=make_gate(request.degenerate_patterns, request.long_answer_ratio))
    if table.source.notice and on_notice is not None:
        on_notice(table.source.notice)
    record = start_run("ragdiag correlate", seeds={"bootstrap": opts.seed} if opts.bootstrap else {})
    record.inputs.append({"path": table.source.name, "sha256": table.source.sha256})  # sha256 already computed
    result = run_correlation(table, opts, by_config=request.by_config, deltas=request.deltas, progress=progress,
                             complete_cases=request.complete_cases)
    record.prompts.update(gate_prompts(result))
    stamp_record(result, record)
    result.meta.add("shown_kinds", list(opts.kinds) if request.corr else list(opts.kinds[:1]))
    distribution = None
    if request.grade_plot is not None:
        from ragdiag.metrics.grade_distribution import grade_distribution

        distribution = grade_distribution(table, request.grade_by.value, opts.min_samples)
        result.add("grade_distribution", distribution)
    write_outputs(result, request, inputs=[graded_source(request)])
    if distribution is not None or request.compare_plot is not None:
        from ragdiag.io.writer import write_figure
        from ragdiag.report.paper003_figures import comparison_heatmap, grade_heatmaps

        note = "SIMULATED GRADES: bundled sample" if result.meta.simulated_grades else None
        if distribution is not None and request.grade_plot is not None:
            write_figure(request.grade_plot, grade_heatmaps(distribution, note))
        if request.compare_plot is not None:
            write_figure(request.compare_plot, comparison_heatmap(result, result.shown_kinds()[0]))
    return result


def run_table(request: CorrelateRequest, table_path: Path) -> CorrelateResult:
    """``--table``: correlate each metric column with the grade column, write ``--out`` / ``--plot``
    (``request`` checked by :func:`check_request`)."""
    from ragdiag.data.metric_table import load_metric_table
    from ragdiag.io.run_record import stamp_record, start_run
    from ragdiag.io.writer import guard_outputs
    from ragdiag.metrics.analysis import parse_kinds
    from ragdiag.metrics.table_correlation import TableOptions, table_report

    if not request.measure_cols:
        raise RagdiagError("--table needs --measure-cols, e.g. --measure-cols ndcg@10,recall@10")
    kinds = parse_kinds(request.corr or "spearman")
    guard_outputs([request.out, request.plot], [table_path])
    record = start_run("ragdiag correlate", inputs=[table_path], seeds={"bootstrap": request.seed})
    table = load_metric_table(table_path, request.grade_col, list(request.measure_cols), request.group_col,
                              request.id_col)
    opts = TableOptions(kinds=kinds, min_samples=DEFAULT_TABLE_MIN_SAMPLES if request.min_samples is None
                        else request.min_samples, bootstrap=request.bootstrap, seed=request.seed, compare=request.compare)
    result = table_report(table, opts, request.grade_col, request.group_col, request.id_col)
    result.meta.add("shown_kinds", list(kinds))
    stamp_record(result, record)
    write_outputs(result, request, inputs=[table_path])
    return result


def write_outputs(result: CorrelateResult, request: CorrelateRequest, inputs: list[Path | None]) -> None:
    """``--out`` (format from ``--format``, else the suffix) and the ``--plot`` heatmap."""
    from ragdiag.commands.provenance import sidecar_manifests
    from ragdiag.io.out_format import write_result
    from ragdiag.io.writer import write_figure
    from ragdiag.report.correlate_report import heatmap, render_text

    if request.out is not None:
        sidecars = sidecar_manifests(result.meta.source)
        write_result(request.out, request.fmt, {fmt: partial(render_text, result, fmt, sidecars=sidecars)
                                                for fmt in ("table", "json", "csv")}, inputs)
    if request.plot is not None:
        write_figure(request.plot, heatmap(result))
