"""``ragdiag evaluate``: check the outputs, evaluate every run against the graded qrels, write the
result (``--out``), the per-query rows and the plot, and return the stamped result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.evaluate.evaluation import EvaluateParams, check_params, evaluate_files
from ragdiag.io.out_format import out_format, write_result
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import check_output_path, guard_outputs, write_jsonl
from ragdiag.metrics.graded_utility import RarityWeights
from ragdiag.report import evaluate_report as report
from ragdiag.results.evaluate import EvaluateResult

__all__ = ["EvaluateParams", "EvaluateRequest", "RarityWeights", "run"]


@dataclass
class EvaluateRequest:
    runs: list[Path]
    qrels: Path
    params: EvaluateParams
    answers: Path | None = None
    out: Path | None = None
    fmt: str | None = None  # --format; None: the suffix of --out decides
    per_query: Path | None = None
    plot: Path | None = None
    progress: bool = True

    @property
    def inputs(self) -> list[Path | None]:
        return [self.qrels, *self.runs, self.answers]


def check_outputs(request: EvaluateRequest) -> None:
    """Every output path, before any file is read: a plot's suffix, writable files, none an input."""
    check_paths(plots={"--plot": request.plot})
    outputs = [request.out, request.per_query, request.plot]
    for path in outputs:
        if path is not None:
            check_output_path(path)
    guard_outputs(outputs, request.inputs)
    if request.out is not None:
        out_format(request.out, request.fmt)
    if request.plot is not None:
        from ragdiag.extras import require

        require("matplotlib")


def run(request: EvaluateRequest) -> EvaluateResult:
    """Check, evaluate, write ``--out`` / ``--per-query`` / ``--plot``; the result carries its run record."""
    if not request.runs:
        raise RagdiagError("give at least one --run")
    check_params(request.params)
    check_outputs(request)
    record = start_run("ragdiag evaluate", inputs=request.inputs, seeds={"bootstrap": request.params.seed})
    result, rows = evaluate_files(request.qrels, request.runs, request.params, request.answers, request.progress)
    result.run_record = record.to_json()
    inputs = request.inputs
    if request.out is not None:
        write_result(request.out, request.fmt, {"json": lambda: report.json_text(result),
                                                "csv": lambda: report.csv_text(result),
                                                "table": lambda: report.table_text(result)}, inputs)
    if request.per_query is not None:
        write_jsonl(request.per_query, rows, inputs=[p for p in inputs if p is not None])
    if request.plot is not None:
        from ragdiag.io.writer import write_figure

        write_figure(request.plot, report.plot(result), inputs=inputs)
    return result
