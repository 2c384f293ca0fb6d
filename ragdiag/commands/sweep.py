"""``ragdiag sweep``: what each ANN operating point costs the answers (exact, gold and empty controls).

:func:`run` checks every option, input and output before any embedding or LLM call, records the run,
sweeps (:func:`ragdiag.sweep.run.run_answer_sweep`, answers through :mod:`ragdiag.answers.contexts`),
writes, all through :mod:`ragdiag.io.writer`: ``sweep.json`` (the result with its run record),
``per_query.jsonl`` (point, query, recall, grade, top-K ids: every mean and share can be recomputed
from it; with ``parquet``, ``per_query.parquet`` instead — columns ``point``, ``query``, ``recall``,
``grade`` float64 null when missing, ``ids`` list<string> — which ``correlate --table`` reads
columnar), ``answers.jsonl`` (each ideal answer, or with ``--answers`` each query's reference answers
and the usable ones, and each distinct context's answer and grade, with its calls and its grade per
reference) and, with ``plot``, the PNGs; it returns the result as a :class:`SweepResult` with the LLM
run summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.judging import GradingOptions, grading_prompts
from ragdiag.answers.plan import AnswerSettings
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import RunRecord, stamp_record, start_run
from ragdiag.io.writer import check_output_dir, guard_outputs, write_json, write_jsonl
from ragdiag.llm.client import ClientConfig
from ragdiag.llm.prompts import load_prompt
from ragdiag.pipeline.run_meta import check_coverage
from ragdiag.results.llm_run import RunSummary
from ragdiag.results.sweep import SweepControl, SweepMeta, SweepPoint, SweepResult
from ragdiag.sweep.run import CONTROLS, SweepConfig, SweepOutcome, check_config, run_answer_sweep

FILES = {"result": "sweep.json", "per_query": "per_query.jsonl", "answers": "answers.jsonl"}
__all__ = ["CONTROLS", "AnswerSettings", "ClientConfig", "GradingOptions", "SweepControl", "SweepMeta", "SweepPoint", "SweepRequest", "SweepResult",
           "SweepRun", "check_coverage", "run"]


@dataclass
class SweepRequest(SweepConfig):
    """Every option of ``ragdiag sweep``: what to sweep (:class:`SweepConfig`), the LLM client, and
    where the outputs go."""

    llm: ClientConfig = field(default_factory=ClientConfig)
    out_dir: Path = Path(".")
    plot: bool = False
    progress: bool = True
    parquet: bool = False


@dataclass
class SweepRun:
    result: SweepResult
    paths: dict[str, Path]
    summary: RunSummary  # the LLM run summary: items = queries × (points + controls), covered = graded
    outcome: SweepOutcome


def output_paths(out_dir: Path, parquet: bool = False) -> dict[str, Path]:
    files = {**FILES, "per_query": "per_query.parquet"} if parquet else FILES
    return {name: Path(out_dir) / file for name, file in files.items()}


def _write_per_query_parquet(path: Path, rows: list[dict[str, Any]], inputs: list[Path]) -> None:
    import pyarrow as pa

    from ragdiag.io.writer import write_parquet

    schema = pa.schema([("point", pa.string()), ("query", pa.string()), ("recall", pa.float64()),
                        ("grade", pa.float64()), ("ids", pa.list_(pa.string()))])
    table = pa.Table.from_pydict({name: [r[name] for r in rows] for name in schema.names}, schema=schema)
    write_parquet(path, table, inputs=inputs)


def write_sweep(outcome: SweepOutcome, out_dir: Path, record: RunRecord, parquet: bool = False) -> dict[str, Path]:
    """Write the three files atomically (inputs guarded); returns their paths."""
    paths = output_paths(out_dir, parquet)
    inputs = list(outcome.data.files.values())
    stamp_record(outcome.result, record)
    write_json(paths["result"], outcome.result.to_json(), inputs=inputs)
    if parquet:
        _write_per_query_parquet(paths["per_query"], outcome.per_query, inputs)
    else:
        write_jsonl(paths["per_query"], outcome.per_query, inputs=inputs)
    write_jsonl(paths["answers"], outcome.contexts, inputs=inputs)
    return paths


def _check(request: SweepRequest) -> list[Path]:
    """Options, inputs and outputs, before any work; the input files."""
    if request.llm.batch is not None:  # its sent/reused accounting assumes synchronous calls
        raise RagdiagError("sweep does not take --batch (its sent / reused call counts assume synchronous calls); "
                           "run it without --batch")
    check_paths(inputs={"--degenerate-patterns": request.grading.degenerate_patterns, "--answers": request.answers})
    request.grading.gate()  # a bad patterns file or ratio stops here, before any work
    check_config(request)
    check_output_dir(request.out_dir, "--out-dir")
    inputs = [p for p in (request.corpus, request.queries, request.qrels, request.answers) if p is not None]
    guard_outputs(output_paths(request.out_dir, request.parquet).values(), inputs)
    if request.parquet:
        from ragdiag.data.graded_parquet import check_graded_output

        check_graded_output(output_paths(request.out_dir, request.parquet)["per_query"])  # pyarrow named before any work
    return inputs


def run(request: SweepRequest) -> SweepRun:
    """Checks before any work, then the sweep, its files (and plots) in ``out_dir``, and its summary."""
    inputs = _check(request)
    llm, cfg = request.llm, request
    record = start_run("ragdiag sweep", inputs=inputs, models={"llm": llm.model, "embedder": cfg.embedder},
                       prompts={"generation": load_prompt("generation").id, **grading_prompts(cfg.grading.grade_mode),
                                cfg.grading.gate().patterns.source.split("@")[0]: cfg.grading.gate().patterns.source,
                                **dict(_french_prompts(cfg))},
                       seeds={"seed": cfg.seed}, cache=llm.cache)
    outcome = run_answer_sweep(cfg, llm, request.progress)
    paths = write_sweep(outcome, request.out_dir, record, request.parquet)
    result = outcome.result
    if request.plot:
        from ragdiag.io.writer import write_figure
        from ragdiag.report.sweep_accuracy import plot_relative_accuracy
        from ragdiag.report.sweep_report import plot_sweep

        for name, figure in [*plot_sweep(result), plot_relative_accuracy(result)]:
            png = write_figure(request.out_dir / name, figure)
            paths[png.stem] = png
    return SweepRun(result, paths, _summary(result, len(outcome.data.query_ids)), outcome)


def _summary(result: SweepResult, queries: int) -> RunSummary:
    """Items = queries (but those whose reference was gated out) × (controls + points); covered = graded."""
    graded = sum(c.n_graded or 0 for c in result.controls) + sum(p.n_graded or 0 for p in result.points)
    gate = result.meta.reference_gate or {}
    gated_queries = 0 if gate["keep_degenerate"] else gate["ideal"]["total"]  # not graded on purpose: not items
    expected = (queries - gated_queries) * (len(result.controls) + len(result.points))
    return RunSummary.from_json({"items": expected, "covered": graded,
                                 "coverage": graded / expected if expected else 1.0,
                                 "seconds": (result.meta.seconds or {}).get("answers", 0.0),
                                 **(result.meta.calls or {}),
                                 "coverage_by_point": point_coverage(result, queries)})


def point_coverage(result: SweepResult, queries: int) -> list[dict[str, Any]]:
    """Graded share per control and operating point (all at the same K): queries graded / queries."""
    return [{"point": name, "items": queries, "covered": graded, "coverage": graded / queries if queries else 1.0}
            for name, graded in [*((c.name, c.n_graded or 0) for c in result.controls),
                                 *((p.label, p.n_graded or 0) for p in result.points)]]


def _french_prompts(cfg: SweepConfig) -> list[tuple[str, str]]:
    """The French prompt versions (name, version) a sweep with --lang fr|auto can use."""
    if cfg.answer is None or cfg.answer.lang == "en":
        return []
    return [(k, v) for n in ("generation", "grading", "grading-repair") for k, v in cfg.answer.prompt_ids(n).items()
            if k.endswith("-fr")]
