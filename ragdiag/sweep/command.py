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
    inputs = [cfg.corpus, cfg.queries, cfg.qrels]
    guard_outputs(output_paths(out_dir, parquet).values(), inputs)
    if parquet:
        from ragdiag.data.graded_parquet import check_graded_output

        check_graded_output(output_paths(out_dir, parquet)["per_query"])  # pyarrow named before any work
    record = start_run("ragdiag sweep", inputs=inputs, models={"llm": llm.model, "embedder": cfg.embedder},
                       prompts={n: load_prompt(n).id for n in ("generation", "grading", "grading-repair")},
                       seeds={"seed": cfg.seed}, cache=llm.cache)
    outcome = run_answer_sweep(cfg, llm, progress)
    paths = write_sweep(outcome, out_dir, record, parquet)
    if plot:
        from ragdiag.report.sweep_report import plot_sweep

        for png in plot_sweep(outcome.result, out_dir):
            paths[png.stem] = png
    result = outcome.result
    graded = sum(c["n_graded"] for c in result["controls"]) + sum(p["n_graded"] for p in result["points"])
    expected = len(outcome.data.query_ids) * (len(result["controls"]) + len(result["points"]))
    summary = {"items": expected, "covered": graded, "coverage": graded / expected if expected else 1.0,
               "seconds": result["meta"]["seconds"].get("answers", 0.0), **result["meta"]["calls"]}
    return SweepCommandResult(outcome, paths, summary)
