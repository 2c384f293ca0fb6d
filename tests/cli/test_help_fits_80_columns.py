"""``--help`` of every command at 80 and 120 columns: every option name and its metavar whole,
no line wider than the terminal, nothing cut with "…", help wrapped at spaces (issue 34)."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli.help_format import wrap_paragraphs
from ragdiag.cli.usage import _commands_under

runner = CliRunner()
ROOT = typer.main.get_command(app)


def _paths(command, prefix=()):
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield (*prefix, name), sub
        yield from _paths(sub, (*prefix, name))


COMMANDS = sorted(_paths(ROOT), key=lambda item: item[0])


def _signature(param) -> str:
    """What the option column shows: ``--a, --b METAVAR`` (flags: their names alone)."""
    names = ", ".join(param.opts)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    return f"{names} {param.metavar}" if param.metavar else names


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_name_and_metavar_is_whole(path, command, columns):
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "…" not in out and "╭" not in out
    assert max(map(len, out.splitlines())) <= columns
    shown = [p for p in command.params if p.opts[0].startswith("-") and not getattr(p, "hidden", False)]
    for param in shown:
        for name in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", out), (name, out)
        # the option column: names and metavar on one line, as declared
        assert any(line.strip().startswith(_signature(param)) for line in out.splitlines()), (_signature(param), out)


def test_generate_help_shows_the_names_that_were_cut():
    out = runner.invoke(app, ["generate", "--help"], env={"COLUMNS": "80"}).output
    for name in ("--max-prompt-tokens TEXT", "--degenerate-patterns PATH", "--long-answer-ratio FLOAT"):
        assert f"  {name}" in out
    assert not re.search(r"--[\w-]+-\n", out)  # no option name broken at a hyphen in the help texts


def test_wrap_breaks_only_at_spaces_commas_and_bars():
    lines = wrap_paragraphs("use --max-prompt-tokens with a:b,c:d,e:f,g:h|i|j", 14)
    assert "--max-prompt-tokens" in lines and all("-" not in line[-1:] for line in lines)
    assert "".join(lines[lines.index("--max-prompt-tokens") + 2:]) == "a:b,c:d,e:f,g:h|i|j"
    assert wrap_paragraphs("\bkeep\n  as is\n\nnext one", 40) == ["keep", "  as is", "", "next one"]


def test_command_lists_show_a_whole_first_sentence():
    out = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).output
    assert "..." not in out.split("Commands:")[1]
    assert "maximising over α (paper 003)" in out


def test_report_usage_names_its_arguments():
    result = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "80"})
    assert "Usage: ragdiag report [OPTIONS] RESULT..." in result.output and "{" not in result.output


def test_commands_under_walks_every_group():
    assert len(list(_commands_under(ROOT))) > len(COMMANDS) / 2
