"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command, render_summary

if TYPE_CHECKING:
    from ragdiag.commands.grade import ClientConfig, GradingOptions


@llm_command
def grade(
    answers: p.Answers,
    out: p.retold(p.OutRequired, "Graded samples (samples_graded schema): a JSON list, or Parquet when the name ends in .parquet (needs pyarrow); its manifest is OUT.manifest.json."),
    repeats: p.Repeats = p.DEFAULT_REPEATS,
    second_judge: p.SecondJudge = None,
    grading: GradingOptions = ao.GRADING,
    no_retry_unparsed: Annotated[bool, typer.Option(
        "--no-retry-unparsed",
        help="Keep the cached judge replies that held no grade (prose, {\"grade\": NaN}, a logprob reply without a digit) instead of asking them "
             "again; by default a rerun asks them again (the summary counts them), never a reply that parsed.")] = False,
    lang: ao.GradeLang = ao.DEFAULT_LANG,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted.

    Rows whose ideal answer is degenerate (empty, a refusal, an echo of the prompt, a copy of the
    question, far longer than the median) are not sent to the judge unless --keep-degenerate.
    """
    from ragdiag.commands import grade as command

    request = command.GradeRequest(answers=answers, out=out, config=config, repeats=repeats, second_judge=second_judge,
                                   grading=grading, retry_unparsed=not no_retry_unparsed, lang=lang.value,
                                   progress=progress)
    result = command.run(request)
    if result.summary.retried_unparsed:
        typer.echo(f"retried {result.summary.retried_unparsed} item(s) whose cached judge reply held no grade "
                   "(--no-retry-unparsed keeps them)", err=True)
    render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest_path})
    command.check_coverage(result.summary, min_coverage, result.manifest_path)
