"""``--help`` of every command at 80 columns: nothing cut with "…", conventional usage names."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli.usage import _commands_under

runner = CliRunner()


def _paths(command, prefix=()):
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield (*prefix, name)
        yield from _paths(sub, (*prefix, name))



COMMANDS = sorted(_paths(typer.main.get_command(app)))


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_cells_are_never_cut(path):
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert max(map(len, result.output.splitlines())) <= 80


def test_report_usage_names_its_arguments():
    result = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "80"})
    assert "Usage: ragdiag report [OPTIONS] RESULT..." in result.output and "{" not in result.output


def test_commands_under_walks_every_group():
    assert len(list(_commands_under(typer.main.get_command(app)))) > len(COMMANDS) / 2
