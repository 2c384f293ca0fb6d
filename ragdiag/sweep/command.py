"""``ragdiag sweep`` as one library call: check, record, run, write, plot, summarise.

The command line only parses options and renders what :func:`sweep_command` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.io.run_record import start_run
from ragdiag.io.writer import check_output_dir, guard_outputs
from ragdiag.llm.client import ClientConfig
from ragdiag.llm.prompts import load_prompt
from ragdiag.pipeline.grade import grading_prompts
from ragdiag.sweep.outputs import output_paths, write_sweep
from ragdiag.sweep.run import SweepConfig, SweepOutcome, check_config, run_answer_sweep


@dataclass
class SweepCommandResult:
    outcome: SweepOutcome
    paths: dict[str, Path]
    summary: dict[str, Any]  # the LLM run summary: items = queries × (points + controls), covered = graded


def sweep_command(cfg: SweepConfig, llm: ClientConfig, out_dir: Path, plot: bool, progress: bool,
                  parquet: bool = False) -> SweepCommandResult:
    """Checks before any work, then the sweep, its files (and plots) in ``out_dir``, and its summary."""
    check_config(cfg)
    check_output_dir(out_dir, "--out-dir")
    inputs = [cfg.corpus, cfg.queries, cfg.qrels, *([cfg.answers] if cfg.answers is not None else [])]
    guard_outputs(output_paths(out_dir, parquet).values(), inputs)
    if parquet:
        from ragdiag.data.graded_parquet import check_graded_output

        check_graded_output(output_paths(out_dir, parquet)["per_query"])  # pyarrow named before any work
    record = start_run("ragdiag sweep", inputs=inputs, models={"llm": llm.model, "embedder": cfg.embedder},
                       prompts={"generation": load_prompt("generation").id, **grading_prompts(cfg.grading.grade_mode),
                                cfg.grading.gate().patterns.source.split("@")[0]: cfg.grading.gate().patterns.source,
                                **(_french_prompts(cfg) if cfg.answer is not None else {})},
                       seeds={"seed": cfg.seed}, cache=llm.cache)
    outcome = run_answer_sweep(cfg, llm, progress)
    paths = write_sweep(outcome, out_dir, record, parquet)
    if plot:
        from ragdiag.report.sweep_report import plot_sweep

        for png in plot_sweep(outcome.result, out_dir):
            paths[png.stem] = png
        from ragdiag.report.sweep_accuracy import plot_relative_accuracy

        png = plot_relative_accuracy(outcome.result, out_dir)
        paths[png.stem] = png
    result = outcome.result
    graded = sum(c["n_graded"] for c in result["controls"]) + sum(p["n_graded"] for p in result["points"])
    gate = result["meta"]["reference_gate"]
    gated_queries = 0 if gate["keep_degenerate"] else gate["ideal"]["total"]  # not graded on purpose: not items
    expected = (len(outcome.data.query_ids) - gated_queries) * (len(result["controls"]) + len(result["points"]))
    summary = {"items": expected, "covered": graded, "coverage": graded / expected if expected else 1.0,
               "seconds": result["meta"]["seconds"].get("answers", 0.0), **result["meta"]["calls"],
               "coverage_by_point": point_coverage(result, len(outcome.data.query_ids))}
    return SweepCommandResult(outcome, paths, summary)


def point_coverage(result: dict[str, Any], queries: int) -> list[dict[str, Any]]:
    """Graded share per control and operating point (all at the same K): queries graded / queries."""
    return [{"point": entry.get("name") or entry["label"], "items": queries, "covered": entry["n_graded"],
             "coverage": entry["n_graded"] / queries if queries else 1.0}
            for entry in [*result["controls"], *result["points"]]]


def _french_prompts(cfg: SweepConfig) -> dict[str, str]:
    """The French prompt versions a sweep with --lang fr|auto can use."""
    if cfg.answer is None or cfg.answer.lang == "en":
        return {}
    return {k: v for n in ("generation", "grading", "grading-repair") for k, v in cfg.answer.prompt_ids(n).items()
            if k.endswith("-fr")}
