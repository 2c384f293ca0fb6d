"""The option groups (cli/options/llm.py: ClientGroup, AnswerGroup, GradingGroup, EngineGroup) are
declared once, attached to a command as one parameter and listed whole, in the group's order; the command
receives the group object, and the group builds the library settings."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import options as o
from ragdiag.cli.help_format import PanelCommand

ROOT = typer.main.get_command(app)
LLM_COMMANDS = ("generate", "grade", "label", "pipeline", "sweep", "triage")
CLIENT, ENGINE, ANSWER, GRADING = (group.names() for group in (o.ClientGroup, o.EngineGroup, o.AnswerGroup,
                                                                 o.GradingGroup))
USES = [*((name, CLIENT) for name in LLM_COMMANDS),
        *((name, ENGINE) for name in (*LLM_COMMANDS, "robustness", "noise", "index build", "probe names")),
        *((name, ANSWER) for name in ("generate", "pipeline", "sweep", "triage")),
        *((name, GRADING) for name in ("grade", "pipeline", "sweep", "triage"))]


def _command(path: str):
    command = ROOT
    for name in path.split():
        command = command.commands[name]
    return command


@pytest.mark.parametrize(("command", "group"), USES, ids=[f"{c}-{g[0]}" for c, g in USES])
def test_a_group_is_listed_whole_in_its_order(command, group):
    """Every option of the group, in the group's order within each help panel (panels in --help order)."""
    params = {param.name: param for param in _command(command).params}
    shown = [name for name in params if name in group]
    assert shown == sorted(group, key=lambda name: o.PANELS.index(params[name].rich_help_panel))


@pytest.mark.parametrize("command", LLM_COMMANDS)
def test_the_llm_options_read_the_same_everywhere(command):
    reference = {param.name: param.get_help_record(ROOT.context_class(ROOT)) for param in _command("generate").params}
    for param in _command(command).params:
        if param.name in CLIENT or param.name in ENGINE:
            assert param.get_help_record(ROOT.context_class(ROOT)) == reference[param.name], param.name


def test_groups_build_the_library_settings(tmp_path):
    from ragdiag.commands.generate import ClientConfig
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions
    from ragdiag.engine.settings import EngineSettings

    answer = o.AnswerGroup(o.PromptLang.fr, "900", o.FitMode.drop, None, 4.0).settings()
    assert answer == AnswerSettings(lang="fr", max_prompt_tokens=900, fit="drop", chars_per_token=4.0)
    grading = o.GradingGroup(o.GradeMode.logprobs, 7, True, None, 3.0).options()
    assert grading == GradingOptions("logprobs", 7, None, 3.0, True)
    config = o.ClientGroup(
        model="m", base_url="http://127.0.0.1:1/v1", cache_dir=tmp_path, cache=o.CacheMode.rw, workers=2, seed=3,
        temperature=0.5, max_retries=1, timeout=9.0, batch=o.BatchMode.vllm_file, batch_max_requests=10,
        batch_max_bytes=1000).config()
    assert config == ClientConfig(model="m", base_url="http://127.0.0.1:1/v1", cache_dir=tmp_path, cache="rw",
                                  workers=2, seed=3, temperature=0.5, max_retries=1, timeout=9.0, batch="vllm-file",
                                  batch_max_requests=10, batch_max_bytes=1000)
    engine = o.EngineGroup(o.EngineKind.local, "auto", 3, 0.0, o.LlmBackend.openai).settings()
    assert engine == EngineSettings("local", "auto", 3, 0.0, "openai")


def test_the_group_defaults_are_the_library_defaults():
    from ragdiag.commands.generate import ClientConfig
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions
    from ragdiag.engine.settings import EngineSettings

    assert o.CLIENT.config() == ClientConfig()
    assert o.ANSWER.settings() == AnswerSettings() and o.GRADING.options() == GradingOptions()
    assert o.ENGINE.settings() == EngineSettings()


UNSET = ("RAGDIAG_MODEL", "RAGDIAG_BASE_URL", "RAGDIAG_WORKERS", "RAGDIAG_PRICES")  # the group options' envvars


def _group_received(argv: list[str]) -> tuple[o.ClientGroup, o.EngineGroup]:
    """The group objects a command receives for ``argv``, through the same splicing as every command."""
    app_ = typer.Typer(add_completion=False)
    received = []

    @app_.command(cls=PanelCommand)
    def main(k: o.K = 3, client: o.ClientGroup = o.CLIENT, engine: o.EngineGroup = o.ENGINE) -> None:
        received.append((k, client, engine))

    shown = CliRunner().invoke(app_, argv, env=dict.fromkeys(UNSET))
    assert shown.exit_code == 0, shown.output
    assert received[0][0] == 3
    return received[0][1], received[0][2]


def test_a_command_receives_its_groups_typed_from_the_flags(tmp_path):
    client, engine = _group_received(["--model", "judge", "--cache-dir", str(tmp_path), "--cache", "replay",
                                      "--batch", "vllm-file", "--no-progress", "--ray-workers", "7"])
    assert client == o.ClientGroup(model="judge", cache_dir=tmp_path, cache=o.CacheMode.replay,
                                   batch=o.BatchMode.vllm_file, progress=False)
    assert isinstance(client.cache_dir, Path) and engine == o.EngineGroup(ray_workers=7)
    assert _group_received([]) == (o.CLIENT, o.ENGINE)


def test_a_group_option_keeps_its_range_check():
    app_ = typer.Typer(add_completion=False)

    @app_.command(cls=PanelCommand)
    def main(client: o.ClientGroup = o.CLIENT) -> None:
        typer.echo(client.workers)

    assert CliRunner().invoke(app_, ["--workers", "0"]).exit_code == 2
    assert CliRunner().invoke(app_, ["--workers", "9"]).output.strip() == "9"
