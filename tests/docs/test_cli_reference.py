"""The generated CLI reference (docs/reference/cli.md → mkdocs-click over ragdiag.cli.reference)
lists every command and every option that ``ragdiag … --help`` shows."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli.reference import command as root

mkdocs_click = pytest.importorskip("mkdocs_click._docs", reason="mkdocs-click (dev extra) is not installed")
OPTION = re.compile(r"--[a-z][a-z0-9-]*")


def _commands(cmd, path: tuple[str, ...] = ()) -> list:
    """(path, command) for the app and every visible subcommand (Typer may vendor click, so the
    group is recognised by its methods)."""
    found = [(path, cmd)]
    if hasattr(cmd, "list_commands"):
        ctx = cmd.context_class(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _commands(sub, (*path, name))
    return found


def _visible_options(cmd) -> set[str]:
    return {opt for param in cmd.params if not getattr(param, "hidden", False)
            for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}


def _reference_sections() -> dict[str, str]:
    """The generated Markdown, split into one section per command (its heading is the full name)."""
    markdown = "\n".join(mkdocs_click.make_command_docs("ragdiag", root, depth=1, style="plain", list_subcommands=True))
    sections, current, names = {}, None, []
    for line in markdown.split("\n"):
        heading = re.match(r"^(#+) ([\w-]+)\s*$", line)
        if heading:
            level = len(heading.group(1)) - 2  # '## ragdiag' is the root
            names = [*names[:level], heading.group(2)]
            current = " ".join(names)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return sections


COMMANDS = _commands(root)


def test_reference_has_a_section_per_command():
    sections = _reference_sections()
    expected = {" ".join(("ragdiag", *path)) for path, _ in COMMANDS}
    assert expected == set(sections), sorted(expected ^ set(sections))


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) or "ragdiag" for p, _ in COMMANDS])
def test_reference_and_help_list_the_same_options(path, cmd):
    section = _reference_sections()[" ".join(("ragdiag", *path))]
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    options = _visible_options(cmd)
    in_help = set(OPTION.findall(result.output))
    in_reference = set(OPTION.findall(section))
    assert options <= in_help, f"not in --help: {sorted(options - in_help)}"
    assert options <= in_reference, f"not in the reference: {sorted(options - in_reference)}"
