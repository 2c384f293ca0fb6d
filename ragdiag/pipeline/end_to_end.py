"""``ragdiag pipeline``: rank (optional) → generate → grade → correlate, into one output directory.

Files: ``answers.jsonl``, ``graded.json`` (samples_graded schema), their ``*.manifest.json``,
``ranked.json`` with ``--rank-with``, and ``correlation.json`` from
:func:`ragdiag.metrics.correlate_job.run_correlation` (the ``correlate`` job) on the graded file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.generate import GenerateResult, run_generate
from ragdiag.pipeline.grade import GradeResult, run_grade
from ragdiag.pipeline.run_meta import write_json


@dataclass
class PipelineResult:
    generated: GenerateResult
    graded: GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]


def correlate_command(graded: Path, segments: str, min_samples: int) -> str:
    """The ``ragdiag correlate`` command line that redoes the last stage."""
    return f"ragdiag correlate --graded {graded} --segments {segments} --min-samples {min_samples}"


def run_pipeline(texts: str, ranked: str | None, rank_with: str | None, ks: list[int], dataset: str, out_dir: Path,
                 config: ClientConfig, repeats: int = 1, judges: list[str] | None = None, segments: str = "ratio",
                 min_samples: int = 300, progress: bool = True) -> PipelineResult:
    """Run every stage; the correlation uses the grades just written (null grades skipped and counted)."""
    from ragdiag.data.loaders import load_graded_file
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import run_correlation

    if segments not in ("ratio", "nw"):
        raise RagdiagError(f"--segments must be ratio or nw, got '{segments}'")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"answers": out_dir / "answers.jsonl", "graded": out_dir / "graded.json",
             "correlation": out_dir / "correlation.json"}
    if rank_with:
        paths["ranked"] = out_dir / "ranked.json"
    generated = run_generate(texts, ranked, ks, dataset, paths["answers"], config, rank_with, paths.get("ranked"), progress)
    graded = run_grade(paths["answers"], paths["graded"], config, repeats, judges, progress)
    table = load_graded_file(paths["graded"])
    correlation = run_correlation(table, CorrelateOptions(segments=segments, min_samples=min_samples))
    correlation["meta"]["pipeline"] = {"command": "pipeline", "equivalent_command":
                                       correlate_command(paths["graded"], segments, min_samples),
                                       "generate_meta": generated.meta, "grade_meta": graded.meta}
    write_json(paths["correlation"], correlation)
    return PipelineResult(generated, graded, correlation, paths)
