"""``--help`` metavars and one-line usage errors, on every command of the real CLI."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app

# click < 8.2 mixes stderr into stdout unless told not to
runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()
ROOT = typer.main.get_command(app)
# click's names, the choices, or an upper-case placeholder such as TOKENS[:OVERLAP]
CONVENTIONAL = re.compile(r"^(TEXT|INTEGER|FLOAT|PATH|BOOLEAN|\[[^\]<>]+\]|[A-Z][A-Z0-9_]*(\[[^\]<>a-z]*\])?)$")
TYPER_STYLE = re.compile(r"<(?:int|str|bool|float|path|list\[[^\]]*\]|[a-z_]+(?:\|[a-z_-]+)*)>")


def _commands(command=ROOT, path=()):
    yield path, command
    for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = [path for path, _ in _commands()]
LEAVES = [path for path, command in _commands() if not getattr(command, "commands", None)]


def _lookup(path):
    command = ROOT
    for name in path:
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "ragdiag")
def test_help_shows_conventional_metavars(path):
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    assert not TYPER_STYLE.search(result.stdout), TYPER_STYLE.search(result.stdout).group(0)
    for param in _lookup(path).params:
        if not getattr(param, "opts", None) or not param.opts[0].startswith("-"):
            continue
        if getattr(param, "is_flag", False) or getattr(param, "is_bool_flag", False):
            assert not param.metavar, f"{param.opts[0]} is a flag but shows {param.metavar!r}"
        elif param.metavar is not None or hasattr(param, "type_descriptor"):  # else click names the type itself
            assert param.metavar and CONVENTIONAL.match(param.metavar), f"{param.opts[0]}: metavar {param.metavar!r}"


def test_numeric_options_all_have_a_range():
    """Every INTEGER/FLOAT option of every command states its range (typer min/max or the callback's interval)."""
    unranged = []
    for path, command in _commands():
        for param in command.params:
            if param.metavar not in ("INTEGER", "FLOAT"):
                continue
            if param.metavar == "INTEGER":
                desc = getattr(param, "type_descriptor", None)
                ranged = (getattr(desc, "is_ranged", None) or hasattr(param.type, "min")  # recent typer / click
                          or "Range" in (param.help or ""))
            else:
                ranged = "Range [" in (param.help or "") or "Range (" in (param.help or "")
            if not ranged:
                unranged.append(f"{' '.join(path)} {param.opts[0]}")
    assert not unranged, unranged


def _one_error_line(result, *needles):
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in result.output and "╭" not in result.output and "│" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_unknown_option_is_one_line_with_a_help_hint(path):
    result = runner.invoke(app, [*path, "--no-such-flag"])
    _one_error_line(result, "no such option: --no-such-flag", f"(see 'ragdiag {' '.join(path)} --help')")


@pytest.mark.parametrize(
    "args, needles",
    [
        (["correlate", "--graded", "x.json", "--bootstrap", "abc"], ["--bootstrap: 'abc' is not a valid integer"]),
        (["correlate", "--graded", "x.json", "--xk", "abc"], ["--xk: 'abc' is not a valid"]),
        (["correlate", "--graded", "x.json", "--segments", "wide"], ["--segments: 'wide' is not one of 'ratio', 'nw'"]),
        (["correlate", "--graded", "x.json", "--bootstrap", "-1"], ["--bootstrap: '-1' is out of range: must be"]),
        (["correlate", "--graded", "x.json", "--xk"], ["--xk", "requires an argument"]),
        (["retrieve", "--queries", "q.jsonl", "--out", "r.jsonl"], ["missing option '--index-dir'"]),
        (["retrieve", "--index-dir", "i", "--queries", "q", "--out", "r", "--mode", "sparse"], ["--mode: 'sparse' is not one of"]),
        (["robustness", "--metric", "dot"], ["--metric: 'dot' is not one of 'ip', 'cosine', 'l2'"]),
        (["nosuchcommand"], ["no such command 'nosuchcommand'"]),
    ],
)
def test_usage_errors_are_one_line(args, needles):
    line = _one_error_line(runner.invoke(app, args), *needles)
    assert "(see 'ragdiag" in line and "--help')" in line


def test_root_without_arguments_prints_help():
    result = runner.invoke(app, [])
    assert "Usage: ragdiag" in result.output and "correlate" in result.output


def test_help_imports_no_heavy_or_remote_library():
    """`ragdiag --help` must work on a core-only install: no torch, faiss, openai, tenacity, httpx."""
    code = ("import sys, ragdiag.cli; print(sorted(m for m in ('torch', 'faiss', 'openai', 'tenacity', 'httpx', "
            "'sentence_transformers', 'matplotlib', 'datasets', 'ppi_py', 'krippendorff', 'sklearn', 'pyarrow', "
            "'tiktoken', 'tokenizers', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_llm_defaults_shown_by_help_are_the_client_defaults():
    import dataclasses

    from ragdiag.cli import options as o
    from ragdiag.engine.settings import EngineSettings
    from ragdiag.llm.client import ClientConfig

    defaults = {f.name: f.default for f in dataclasses.fields(ClientConfig)}
    assert (o.DEFAULT_MODEL, o.DEFAULT_CACHE_MODE.value, o.DEFAULT_WORKERS, o.DEFAULT_SEED,
            o.DEFAULT_TEMPERATURE, o.DEFAULT_MAX_RETRIES, o.DEFAULT_TIMEOUT, o.DEFAULT_BATCH_POLL,
            o.DEFAULT_BATCH_MAX_REQUESTS, o.DEFAULT_BATCH_MAX_BYTES) == (
        defaults["model"], defaults["cache"], defaults["workers"], defaults["seed"], defaults["temperature"],
        defaults["max_retries"], defaults["timeout"], defaults["batch_poll"], defaults["batch_max_requests"],
        defaults["batch_max_bytes"])
    assert EngineSettings().ray_address == o.DEFAULT_RAY_ADDRESS


def test_answer_option_defaults_shown_by_help_are_the_library_defaults():
    from ragdiag.answers.plan import AnswerSettings
    from ragdiag.cli import options as answer_options
    from ragdiag.llm.context_budget import DEFAULT_CHARS_PER_TOKEN

    library = AnswerSettings()
    assert (answer_options.DEFAULT_LANG.value, answer_options.DEFAULT_FIT.value, answer_options.DEFAULT_CHARS_PER_TOKEN) \
        == (library.lang, library.fit, DEFAULT_CHARS_PER_TOKEN)
