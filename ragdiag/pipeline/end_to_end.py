"""``ragdiag pipeline``: rank (optional) → generate → grade → correlate, into one output directory.

Files: ``answers.jsonl``, ``graded.json`` (samples_graded schema), their ``<name>.manifest.json``,
``ranked.json`` with ``--rank-with``, and ``correlation.json`` from
:func:`ragdiag.metrics.correlate_job.run_correlation` (the ``correlate`` job) on the graded file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.answer_plan import AnswerSettings
from ragdiag.pipeline.generate import GenerateResult, run_generate
from ragdiag.pipeline.grade import GradeResult, run_grade
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
from ragdiag.pipeline.run_meta import manifest_path


@dataclass
class PipelineResult:
    generated: GenerateResult
    graded: GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]


def correlate_command(graded: Path, segments: str, min_samples: int, complete_cases: bool = False) -> str:
    """The ``ragdiag correlate`` command line that redoes the last stage."""
    flag = " --complete-cases" if complete_cases else ""
    return f"ragdiag correlate --graded {graded} --segments {segments} --min-samples {min_samples}{flag}"


def run_pipeline(texts: str, ranked: str | None, rank_with: str | None, ks: list[int], dataset: str, out_dir: Path,
                 config: ClientConfig, repeats: int = 1, judges: list[str] | None = None, segments: str = "ratio",
                 min_samples: int = 300, progress: bool = True, settings: AnswerSettings | None = None,
                 complete_cases: bool = False) -> PipelineResult:
    """Run every stage; the correlation uses the grades just written (null grades skipped and counted)."""
    from ragdiag.data.loaders import load_graded_file
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import run_correlation

    from ragdiag.metrics.segments import SEGMENTATIONS

    if segments not in SEGMENTATIONS:
        raise RagdiagError(f"--segments must be one of {', '.join(SEGMENTATIONS)}, got '{segments}'")
    check_output_dir(out_dir, "--out-dir")
    paths = {"answers": out_dir / "answers.jsonl", "graded": out_dir / "graded.json",
             "correlation": out_dir / "correlation.json"}
    if rank_with:
        paths["ranked"] = out_dir / "ranked.json"
    inputs = [p for p in (texts, ranked) if p is not None and not str(p).startswith("hf:")]
    guard_outputs([*paths.values(), manifest_path(paths["answers"]), manifest_path(paths["graded"])], inputs)
    record = start_run("ragdiag pipeline", inputs=inputs, models={"llm": judges or [config.model]},
                       seeds={"llm": config.seed}, cache=config.cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    generated = run_generate(texts, ranked, ks, dataset, paths["answers"], config, rank_with, paths.get("ranked"), progress,
                             settings=settings)
    graded = run_grade(paths["answers"], paths["graded"], config, repeats, judges, progress,
                       lang=settings.lang if settings else "auto")
    table = load_graded_file(paths["graded"])
    correlation = run_correlation(table, CorrelateOptions(segments=segments, min_samples=min_samples), record=record,
                                  complete_cases=complete_cases)
    correlation["meta"]["pipeline"] = {"command": "pipeline", "equivalent_command":
                                       correlate_command(paths["graded"], segments, min_samples, complete_cases),
                                       "generate_meta": generated.meta, "grade_meta": graded.meta}
    record.prompts.update({prompt.split("@")[0]: prompt for prompt in [*generated.meta["prompts"], *graded.meta["prompts"]]})
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs)
    return PipelineResult(generated, graded, correlation, paths)
