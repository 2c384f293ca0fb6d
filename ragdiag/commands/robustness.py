"""``ragdiag robustness``: Robustness-δ@K (share of queries with recall ≥ δ) beside average recall,
QPS and latency, for vector indexes against exact search or for runs against qrels.

:func:`run` checks every option, input and output before any embedding or index build, measures
(:func:`ragdiag.bench.robustness.measure`), stamps the run record, and writes the result (``--out``:
JSON or the text table), the per-query rows and the plots through :mod:`ragdiag.io.writer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.bench.robustness import (
    RobustnessOptions,
    check_index_specs,
    input_paths,
    measure,
    resolved,
    run_paths,
)
from ragdiag.errors import RagdiagError
from ragdiag.io.out_format import out_format, write_result
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import stamp_record, start_run
from ragdiag.io.writer import guard_outputs, write_jsonl
from ragdiag.results.robustness import RobustnessMeta, RobustnessPoint, RobustnessResult

__all__ = ["RobustnessMeta", "RobustnessPoint", "RobustnessRequest", "RobustnessResult", "run"]

FILE_FORMATS = ("table", "json")


@dataclass
class RobustnessRequest(RobustnessOptions):
    """Every option of ``ragdiag robustness``: what to measure (:class:`RobustnessOptions`) and where
    the outputs go."""

    out: Path | None = None
    fmt: str | None = None  # --format: the --out file's format when given (else its suffix)
    per_query: Path | None = None
    plot_dir: Path | None = None
    progress: bool = False


def check_options(opts: RobustnessOptions) -> None:
    """Every option checked before any work: ranges, and one kind of input."""
    from ragdiag.retrieval.indexes import check_metric

    check_metric(opts.metric)
    if opts.k <= 0:
        raise RagdiagError(f"k must be positive, got {opts.k}")
    if opts.latency_queries is not None and opts.latency_queries <= 0:
        raise RagdiagError(f"the number of latency queries must be positive, got {opts.latency_queries}")
    if opts.repeats <= 0:
        raise RagdiagError(f"the number of QPS repeats must be positive, got {opts.repeats}")
    if not 1 <= opts.pg_builds <= 100:
        raise RagdiagError(f"--pg-builds must be in [1, 100], got {opts.pg_builds}")
    if opts.threads is not None and opts.threads <= 0:
        raise RagdiagError(f"threads must be positive, got {opts.threads}")
    if not 0 <= opts.bootstrap <= 1_000_000:
        raise RagdiagError(f"--bootstrap must be in [0, 1000000], got {opts.bootstrap}")
    if not 2 <= opts.lid_k <= 1000:
        raise RagdiagError(f"--lid-k must be in [2, 1000], got {opts.lid_k}")
    if opts.adaptive is not None:
        from ragdiag.bench.adaptive import parse_adaptive

        parse_adaptive(opts.adaptive)
        if opts.run or opts.qrels:
            raise RagdiagError("--adaptive searches an index again: give vectors or texts and --index-spec, not runs")
    if opts.hardness and (opts.run or opts.qrels):
        raise RagdiagError("--hardness measures queries against the base vectors: give vectors or texts, not runs")
    if opts.min_recall is not None and not 0 <= opts.min_recall <= 1:
        raise RagdiagError(f"--min-recall must be in [0, 1], got {opts.min_recall}")
    if opts.match_recall is not None:
        if not 0 < opts.match_recall <= 1:
            raise RagdiagError(f"--match-recall must be in (0, 1], got {opts.match_recall}")
        if opts.run or opts.qrels:
            raise RagdiagError("--match-recall compares index families against exact search: give vectors or texts "
                               "and --index-spec, not runs with qrels")
    kinds = [name for name, given in (("vectors (.npy)", opts.base or opts.queries),
                                      ("texts to embed (corpus, queries)", opts.corpus or opts.query_texts),
                                      ("runs with qrels", opts.run or opts.qrels)) if given]
    if len(kinds) > 1:
        raise RagdiagError(f"robustness measures one kind of input, got {' and '.join(kinds)}: "
                           "vectors and texts measure an index against exact search, runs against relevance labels")
    if (opts.run or opts.qrels) and not (opts.run and opts.qrels):
        raise RagdiagError("--run and --qrels go together")


def _check_paths(request: RobustnessRequest) -> str | None:
    """Inputs and outputs checked (named by their flag); the ``--out`` format."""
    check_paths(inputs={"--base-vectors": request.base, "--query-vectors": request.queries, "--corpus": request.corpus,
                        "--queries": request.query_texts, "--qrels": request.qrels,
                        **{f"--run {r}": r for r in run_paths(request)}},
                outputs={"--out": request.out, "--per-query": request.per_query},
                folders={"--plot-dir": request.plot_dir, "--cache-dir": request.cache_dir})
    return out_format(request.out, request.fmt, FILE_FORMATS) if request.out is not None else None


def run(request: RobustnessRequest) -> RobustnessResult:
    """Check, measure, stamp, write; the result."""
    file_format = _check_paths(request)
    check_options(request)
    opts = resolved(request)
    check_index_specs(opts)
    inputs = input_paths(opts)
    guard_outputs([request.out, request.per_query], inputs)
    record = start_run("ragdiag robustness", inputs=inputs, seeds={"ivf_kmeans": opts.seed, "bootstrap": opts.seed},
                       models={"embedder": opts.embedder} if opts.corpus else {})
    result, rows = measure(opts, progress=request.progress)
    stamp_record(result, record)
    _write(request, result, rows, file_format, inputs)
    return result


def _write(request: RobustnessRequest, result: RobustnessResult, rows: list[dict[str, Any]], file_format: str | None,
           inputs: list[Path]) -> None:
    """The --out file (JSON or table), the per-query rows, the plots: each through the atomic writer."""
    import json

    if request.out is not None:
        from ragdiag.report.robustness_table import table_text

        write_result(request.out, file_format, {"json": lambda: json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n",
                                                "table": lambda: table_text(result)}, inputs)
    if request.per_query:
        write_jsonl(request.per_query, rows, inputs=inputs)
    if request.plot_dir:
        from ragdiag.io.writer import write_figure
        from ragdiag.report.robustness_plots import robustness_figures

        figures = robustness_figures(result)
        if result.adaptive:
            from ragdiag.report.adaptive_report import adaptive_figures

            figures += adaptive_figures(result.adaptive, result.meta.deltas)
        if result.matched_recall is not None and result.meta.k is not None:
            from ragdiag.report.matched_recall_plots import matched_figures

            figures += matched_figures(result.matched_recall, result.meta.k)
        for name, figure in figures:
            write_figure(request.plot_dir / name, figure)
