"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema).

:func:`run` checks the options, the paths, the judges and the reference gate before any call, reads
and checks the whole answers file, judges (:func:`ragdiag.answers.runs.grade`), then writes the graded
JSON or Parquet and its manifest through :mod:`ragdiag.io.writer`, the manifest stamped with the run
record (the writing helpers it shares with ``pipeline``: :mod:`ragdiag.commands.answer_files`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.judging import GRADE_MODES, GradingOptions
from ragdiag.commands.answer_files import GradeResult, grade_record, write_graded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.llm.language import LANG_CHOICES
from ragdiag.pipeline.run_meta import check_coverage
from ragdiag.results.llm_run import RunManifest, RunMeta, RunSummary

__all__ = ["ClientConfig", "GradeRequest", "GradeResult", "GradingOptions", "RunManifest", "RunMeta", "RunSummary",
           "check_coverage", "run"]


@dataclass
class GradeRequest:
    """Every option of ``grade``."""

    answers: Path
    out: Path
    config: ClientConfig
    repeats: int = 1
    second_judge: str | None = None
    grading: GradingOptions = field(default_factory=GradingOptions)
    retry_unparsed: bool = True
    lang: str = "auto"
    progress: bool = True


def check_grading(repeats: int, grading: GradingOptions, lang: str) -> None:
    """Repeats, grade mode, top logprobs and language, before any file is read."""
    if repeats < 1:
        raise RagdiagError(f"--repeats must be at least 1, got {repeats}")
    if grading.grade_mode not in GRADE_MODES:
        raise RagdiagError(f"--grade-mode must be one of {', '.join(GRADE_MODES)}, got '{grading.grade_mode}'")
    if not 1 <= grading.top_logprobs <= 20:
        raise RagdiagError(f"--top-logprobs must be between 1 and 20, got {grading.top_logprobs}")
    if lang not in LANG_CHOICES:
        raise RagdiagError(f"--lang must be one of {', '.join(LANG_CHOICES)}, got '{lang}'")


def run(request: GradeRequest) -> GradeResult:
    """Check, read the answers, grade, write the graded rows and their manifest, stamp."""
    from ragdiag.answers.answers_file import read_answers
    from ragdiag.answers.judging import judge_models
    from ragdiag.answers.runs import grade, grade_prompt_versions
    from ragdiag.commands.llm_files import guard_run_outputs
    from ragdiag.data.graded_parquet import check_graded_output
    from ragdiag.io.files import file_sha256
    from ragdiag.io.paths import check_paths

    grading = request.grading
    check_paths(inputs={"--answers": request.answers, "--degenerate-patterns": grading.degenerate_patterns},
                outputs={"--out": request.out}, folders={"--cache-dir": request.config.cache_dir})
    judges = judge_models(request.config, request.second_judge)
    gate = grading.gate()
    check_grading(request.repeats, grading, request.lang)
    inputs: list[Any] = [request.answers]
    manifest = guard_run_outputs([request.out], inputs)
    check_graded_output(request.out)
    answers = read_answers(request.answers)
    prompts = dict(grade_prompt_versions(answers, grading.grade_mode, request.lang))
    record = grade_record(request.config, prompts, judges, gate.patterns.source, inputs)
    graded = grade(answers, request.answers, file_sha256(request.answers), request.config, judges, request.repeats,
                   gate, grading.grade_mode, grading.top_logprobs, grading.keep_degenerate, request.retry_unparsed,
                   request.lang, request.progress)
    return write_graded(request.out, manifest, graded, record, inputs)
