"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema).

:func:`run` checks the paths, the judges and the reference gate before any call, then runs
:func:`ragdiag.pipeline.grade.run_grade` (graded JSON or Parquet and its manifest, through
``ragdiag.io.writer``, the manifest stamped with the run record).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.grade import GradeResult, GradingOptions
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


def run(request: GradeRequest) -> GradeResult:
    """Check, grade, write the graded rows and their manifest; the result holds both."""
    from ragdiag.io.paths import check_paths
    from ragdiag.pipeline.grade import judge_models, run_grade

    grading = request.grading
    check_paths(inputs={"--answers": request.answers, "--degenerate-patterns": grading.degenerate_patterns},
                outputs={"--out": request.out}, folders={"--cache-dir": request.config.cache_dir})
    judges = judge_models(request.config, request.second_judge)
    return run_grade(request.answers, request.out, request.config, request.repeats, judges, request.progress,
                     grading.grade_mode, grading.top_logprobs, grading.gate(), grading.keep_degenerate,
                     retry_unparsed=request.retry_unparsed, lang=request.lang)
