"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli import options as o
from ragdiag.report.llm_summary import render_summary


def grade(
    answers: o.Answers,
    out: Annotated[Path, o.retold(o.OutRequired, "Graded samples (samples_graded schema): a JSON list, or Parquet when the name ends in .parquet (needs pyarrow); its manifest is OUT.manifest.json.")],
    client: o.ClientGroup = o.CLIENT,
    repeats: o.Repeats = o.DEFAULT_REPEATS,
    second_judge: o.SecondJudge = None,
    grading: o.GradingGroup = o.GRADING,
    no_retry_unparsed: Annotated[bool, o.option(
        o.LLM, "--no-retry-unparsed",
        help="Keep the cached judge replies that held no grade (prose, {\"grade\": NaN}, a logprob reply without a digit) instead of asking them "
             "again; by default a rerun asks them again (the summary counts them), never a reply that parsed.")] = False,
    lang: o.GradeLang = o.DEFAULT_LANG,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted.

    Rows whose ideal answer is degenerate (empty, a refusal, an echo of the prompt, a copy of the
    question, far longer than the median) are not sent to the judge unless --keep-degenerate.
    """
    config = client.config()
    grading_options = grading.options()
    with o.llm_run(client, engine):
        from ragdiag.commands import grade as command

        request = command.GradeRequest(answers=answers, out=out, config=config, repeats=repeats, second_judge=second_judge,
                                       grading=grading_options, retry_unparsed=not no_retry_unparsed, lang=lang.value,
                                       progress=client.progress)
        result = command.run(request)
        if result.summary.retried_unparsed:
            typer.echo(f"retried {result.summary.retried_unparsed} item(s) whose cached judge reply held no grade "
                       "(--no-retry-unparsed keeps them)", err=True)
        render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest_path})
        command.check_coverage(result.summary, client.min_coverage, result.manifest_path)
