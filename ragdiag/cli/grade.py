"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command, render_summary

if TYPE_CHECKING:
    from ragdiag.llm.client import ClientConfig


@llm_command
def grade(
    answers: Annotated[Path, p.path_option("--answers", "Answers file written by ragdiag generate.")],
    out: Annotated[Path, p.path_option("--out", "Graded samples (JSON list, samples_graded schema); its manifest is OUT.manifest.json.")],
    repeats: p.Repeats = p.DEFAULT_REPEATS,
    second_judge: p.SecondJudge = None,
    lang: ao.GradeLang = ao.DEFAULT_LANG,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted."""
    from ragdiag.cli.paths import check_paths
    from ragdiag.pipeline.grade import judge_models, run_grade
    from ragdiag.pipeline.run_meta import check_coverage

    check_paths(inputs={"--answers": answers}, outputs={"--out": out}, folders={"--cache-dir": config.cache_dir})
    result = run_grade(answers, out, config, repeats, judge_models(config, second_judge), progress, lang=lang.value)
    render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
