"""``--help`` groups every command's options in panels (Input, Retrieval, LLM, Statistics, Output, then
LLM client, Prompt budget, Batch, Engine and Options: --help), in that order; each option line and its
help read exactly as in click's single "Options" list, so the panels change nothing but the headings
and the order."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.core import TyperCommand
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import options as o
from ragdiag.cli.help_format import PanelCommand

ROOT = typer.main.get_command(app)
runner = CliRunner()
HEADING = re.compile(r"^([A-Z][A-Za-z ]*):$")


def _leaves(command=ROOT, path=()):
    subs = getattr(command, "commands", None)
    if not subs:
        yield path, command
    for name, sub in sorted((subs or {}).items()):
        yield from _leaves(sub, (*path, name))


LEAVES = list(_leaves())
IDS = [" ".join(path) for path, _ in LEAVES]


def _entries(text: str) -> dict[str, list[str]]:
    """Heading → its entries (an option line with the help lines under it)."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            current = heading.group(1)
            sections[current] = []
        elif current is not None and line.startswith("  ") and not line.startswith("   "):
            sections[current].append(line)
        elif current is not None and line.strip():
            sections[current][-1] += "\n" + line
    return sections


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_every_option_names_a_known_panel(path, command):
    assert isinstance(command, PanelCommand), f"{' '.join(path)} is not registered with cls=PanelCommand"
    for param in command.params:
        if param.param_type_name == "option":
            assert param.rich_help_panel in o.PANELS, f"{' '.join(path)} {param.opts[0]}: panel {param.rich_help_panel!r}"


@pytest.mark.parametrize("columns", [80])
@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_panels_change_only_headings_and_order(path, command, columns):
    shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)}, terminal_width=columns)
    assert shown.exit_code == 0, shown.output
    panels = _entries(shown.output)
    headings = [name for name in panels if name != "Arguments"]
    assert headings == [panel for panel in o.PANELS if panel in headings], headings
    assert panels["Options"][-1].startswith("  --help ")
    ctx = command.context_class(command, info_name=path[-1], terminal_width=columns, max_content_width=columns)
    formatter = ctx.make_formatter()
    TyperCommand.format_options(command, ctx, formatter)  # click's one "Options" list
    plain = _entries(formatter.getvalue())
    for entry in panels.get("Arguments", []):  # NAME TYPE, as click names its types (typer would say <path>)
        assert re.match(r"^  \S+ (PATH|TEXT|INTEGER|FLOAT)  ", entry), entry
    assert sorted(entry for name in headings for entry in panels[name]) == sorted(plain["Options"])


def test_an_option_sits_under_its_declared_panel():
    sections = _entries(runner.invoke(app, ["pipeline", "--help"], env={"COLUMNS": "200"}).output)
    flags = {name: {entry.split()[0] for entry in entries} for name, entries in sections.items()}
    assert {"--texts", "--qrels", "--corpus"} <= flags["Input"] and "--retriever" in flags["Retrieval"]
    assert {"--model", "--base-url", "--grade-mode", "--lang"} <= flags["LLM"]
    assert {"--cache", "--workers", "--seed", "--min-coverage"} <= flags["LLM client"]
    assert {"--segments", "--min-samples", "--complete-cases"} <= flags["Statistics"]
    assert {"--out-dir", "--parquet", "--progress"} <= flags["Output"]
    assert flags["Engine"] == {"--engine", "--ray-address", "--ray-workers", "--gpus-per-worker", "--llm-backend"}
    assert flags["Options"] == {"--help"}


def _help_order(path) -> list[tuple[str, str]]:
    """(panel, flag) of every option line, in the order ``--help`` shows them."""
    shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    return [(panel, entry.split()[0].rstrip(",")) for panel, entries in _entries(shown.output).items()
            for entry in entries if panel != "Arguments"]


LATER_PANELS = {  # options a user rarely sets first: each set in its own panel, after Input … Output
    "Prompt budget": {"--max-prompt-tokens", "--fit", "--tokenizer", "--chars-per-token", "--max-answer-tokens"},
    "Batch": {"--batch", "--batch-dir", "--batch-wait", "--batch-poll", "--batch-max-requests", "--batch-max-bytes"},
    "Engine": {"--engine", "--ray-address", "--ray-workers", "--gpus-per-worker", "--llm-backend"},
}
LLM_COMMANDS = [(path, command) for path, command in LEAVES if "batch_max_bytes" in {p.name for p in command.params}]


def test_the_llm_commands_are_found():
    assert {" ".join(path) for path, _ in LLM_COMMANDS} == {"compare", "generate", "grade", "label", "pipeline", "sweep",
                                                                "triage"}


@pytest.mark.parametrize(("path", "command"), LLM_COMMANDS, ids=[" ".join(path) for path, _ in LLM_COMMANDS])
def test_inputs_then_model_and_base_url_lead_the_help(path, command):
    """Issue 39: what a user sets first (inputs, --k, --model, --base-url) comes before batch, tokenizer
    and engine options; before --model there are only the Input and Retrieval panels."""
    order = _help_order(path)
    flags = [flag for _, flag in order]
    first = flags.index("--model")
    assert {panel for panel, _ in order[:first]} <= {"Input", "Retrieval"}, order[:first]
    assert order[first:first + 2] == [("LLM", "--model"), ("LLM", "--base-url")]


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_batch_tokenizer_and_engine_options_come_later_in_their_own_panels(path, command):
    order = _help_order(path)
    for panel, flags in LATER_PANELS.items():
        assert {flag for shown_in, flag in order if flag in flags} == {flag for shown_in, flag in order
                                                                      if shown_in == panel}, panel
    early = [i for i, (panel, _) in enumerate(order) if panel in {"Input", "Retrieval", "LLM", "Statistics", "Output"}]
    late = [i for i, (panel, _) in enumerate(order) if panel in LATER_PANELS]
    assert not early or not late or max(early) < min(late)
