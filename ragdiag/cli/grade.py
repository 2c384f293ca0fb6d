"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.llm.client import ClientConfig

Repeats = Annotated[int, typer.Option("--repeats", help="Judge each answer N times (distinct cache entries).")]
SecondJudge = Annotated[Optional[str], typer.Option("--second-judge", help="Another judge model, for agreement between judges.")]


@llm_command
def grade(
    answers: Annotated[Path, typer.Option("--answers", help="Answers file written by ragdiag generate.")],
    out: Annotated[Path, typer.Option("--out", help="Graded samples (JSON list, samples_graded schema).")],
    repeats: Repeats = 1,
    second_judge: SecondJudge = None,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted."""
    from ragdiag.pipeline.grade import run_grade
    from ragdiag.pipeline.run_meta import check_coverage

    judges = [config.model] + ([second_judge] if second_judge else [])
    result = run_grade(answers, out, config, repeats, judges, progress)
    render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
