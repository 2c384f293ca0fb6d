"""The answer and grading options are declared once (cli/answer_options.py) and composed by generate,
grade, pipeline and sweep: each group's options appear together, in the group's order, and the command
receives the built settings."""

from __future__ import annotations

import pytest
import typer.main

from ragdiag.cli import answer_options as ao
from ragdiag.cli import app


def _options(command: str) -> list[str]:
    return [param.name for param in typer.main.get_command(app).commands[command].params]


@pytest.mark.parametrize(("command", "group"), [("generate", ao.ANSWER), ("pipeline", ao.ANSWER), ("sweep", ao.ANSWER),
                                                ("grade", ao.GRADING), ("pipeline", ao.GRADING), ("sweep", ao.GRADING)])
def test_a_group_is_listed_in_place_in_its_order(command, group):
    names = [name for name, _, _ in group.options]
    options = _options(command)
    start = options.index(names[0])
    assert options[start:start + len(names)] == names


def test_groups_build_the_library_settings():
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions

    answer = ao.ANSWER.build(lang=ao.PromptLang.fr, max_prompt_tokens="900", fit=ao.FitMode.drop, tokenizer=None,
                             chars_per_token=4.0)
    assert answer == AnswerSettings(lang="fr", max_prompt_tokens=900, fit="drop", chars_per_token=4.0)
    grading = ao.GRADING.build(grade_mode=ao.p.GradeMode.logprobs, top_logprobs=7, keep_degenerate=True,
                               degenerate_patterns=None, long_answer_ratio=3.0)
    assert grading == GradingOptions("logprobs", 7, None, 3.0, True)
