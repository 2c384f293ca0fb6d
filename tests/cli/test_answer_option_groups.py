"""The option groups (cli/options/llm.py: CLIENT, ANSWER, GRADING, ENGINE) are declared once and listed
by every command that takes them, whole and in the group's order, under one help panel; their builders
make the library settings."""

from __future__ import annotations

import pytest
import typer.main

from ragdiag.cli import app
from ragdiag.cli import options as o

ROOT = typer.main.get_command(app)
LLM_COMMANDS = ("generate", "grade", "label", "pipeline", "sweep", "triage")
USES = [*((name, o.CLIENT) for name in LLM_COMMANDS),
        *((name, o.ENGINE) for name in (*LLM_COMMANDS, "robustness", "noise", "index build", "probe names")),
        *((name, o.ANSWER) for name in ("generate", "pipeline", "sweep", "triage")),
        *((name, o.GRADING) for name in ("grade", "pipeline", "sweep", "triage"))]


def _command(path: str):
    command = ROOT
    for name in path.split():
        command = command.commands[name]
    return command


@pytest.mark.parametrize(("command", "group"), USES, ids=[f"{c}-{g[0]}" for c, g in USES])
def test_a_group_is_listed_whole_in_its_order(command, group):
    names = [param.name for param in _command(command).params]
    start = names.index(group[0])
    assert names[start:start + len(group)] == list(group)


@pytest.mark.parametrize("command", LLM_COMMANDS)
def test_the_llm_options_read_the_same_everywhere(command):
    reference = {param.name: param.get_help_record(ROOT.context_class(ROOT)) for param in _command("generate").params}
    for param in _command(command).params:
        if param.name in o.CLIENT or param.name in o.ENGINE:
            assert param.get_help_record(ROOT.context_class(ROOT)) == reference[param.name], param.name


def test_groups_build_the_library_settings(tmp_path):
    from ragdiag.commands.generate import ClientConfig
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions
    from ragdiag.engine.settings import EngineSettings

    answer = o.answer_settings(o.PromptLang.fr, "900", o.FitMode.drop, None, 4.0)
    assert answer == AnswerSettings(lang="fr", max_prompt_tokens=900, fit="drop", chars_per_token=4.0)
    grading = o.grading_options(o.GradeMode.logprobs, 7, True, None, 3.0)
    assert grading == GradingOptions("logprobs", 7, None, 3.0, True)
    config = o.client_config(
        model="m", base_url="http://127.0.0.1:1/v1", cache_dir=tmp_path, cache=o.CacheMode.rw, workers=2, seed=3,
        temperature=0.5, max_retries=1, timeout=9.0, rpm=None, tpm=None, prices=None, batch=o.BatchMode.vllm_file,
        batch_dir=None, batch_wait=None, batch_poll=o.DEFAULT_BATCH_POLL, batch_max_requests=10, batch_max_bytes=1000)
    assert config == ClientConfig(model="m", base_url="http://127.0.0.1:1/v1", cache_dir=tmp_path, cache="rw",
                                  workers=2, seed=3, temperature=0.5, max_retries=1, timeout=9.0, batch="vllm-file",
                                  batch_max_requests=10, batch_max_bytes=1000)
    engine = o.engine_settings(o.EngineKind.local, "auto", 3, 0.0, o.LlmBackend.openai)
    assert engine == EngineSettings("local", "auto", 3, 0.0, "openai")
