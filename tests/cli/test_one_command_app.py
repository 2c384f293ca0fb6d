"""The console script builds the invoked command alone (``ragdiag.cli.one_command_app``): for every command
and group, its ``--help`` and a usage error, and a deprecated spelling, answer exactly as the whole app does."""

from __future__ import annotations

import inspect

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app, one_command_app

# click < 8.2 mixes stderr into stdout unless told not to
runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()
NAMES = [info.name for info in app.registered_commands] + [info.name for info in app.registered_groups]


def _answer(application, args: list[str]) -> tuple[int, str, str]:
    result = runner.invoke(application, args, env={"COLUMNS": "100"})
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tail", [["--help"], ["--no-such-option"]], ids=["help", "usage-error"])
def test_one_command_answers_as_the_whole_app(name: str, tail: list[str]) -> None:
    args = [name, *tail]
    one = one_command_app(args)
    assert one is not None and len(one.registered_commands) + len(one.registered_groups) == 1
    assert _answer(one, args) == _answer(app, args)


def test_deprecated_spellings_are_rewritten_as_in_the_whole_app() -> None:
    args = ["index", "build", "--no-cache", "--help"]
    answer = _answer(one_command_app(args), args)
    assert answer == _answer(app, args) and "deprecated" in answer[2]


@pytest.mark.parametrize("args", [[], ["--version"], ["--help"], ["no-such-command"], ["--config", "x.toml", "correlate"]])
def test_root_options_and_unknown_names_get_the_whole_app(args: list[str]) -> None:
    assert one_command_app(args) is None
