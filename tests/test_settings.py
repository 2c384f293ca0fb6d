"""Settings users repeat (issue 30): ragdiag.toml / --config / [tool.ragdiag] and RAGDIAG_* variables,
with precedence flag > environment > file > default, shown by `ragdiag config show` and kept in the
run record; bad files are one line and exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import options as p
from ragdiag.io.settings import BY_KEY, SETTINGS
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer


@pytest.fixture()
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for setting in SETTINGS:
        monkeypatch.delenv(setting.env, raising=False)
    return tmp_path


def _show(*args: str) -> dict:
    done = CliRunner().invoke(app, [*args, "config", "show", "--format", "json"])
    assert done.exit_code == 0, done.output
    return {row["key"]: row for row in json.loads(done.stdout)["settings"]}


def test_file_then_environment_then_default(here, monkeypatch):
    (here / "ragdiag.toml").write_text('model = "from-file"\nworkers = 3\n')
    monkeypatch.setenv("RAGDIAG_MODEL", "from-env")
    shown = _show()
    assert (shown["model"]["value"], shown["model"]["source"]) == ("from-env", "env")
    assert (shown["workers"]["value"], shown["workers"]["source"]) == ("3", "file")
    assert (shown["embedder"]["value"], shown["embedder"]["source"]) == (None, "default")
    assert "RAGDIAG_WORKERS" not in os.environ  # the file's values do not outlive the command


def test_config_flag_and_pyproject_table(here):
    (here / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ragdiag]\nembedder = "st:model-a"\n')
    assert _show()["embedder"]["value"] == "st:model-a"
    (here / "team.toml").write_text('embedder = "st:model-b"\n')
    assert _show("--config", "team.toml")["embedder"]["value"] == "st:model-b"
    (here / "ragdiag.toml").write_text('embedder = "st:model-c"\n')
    assert _show()["embedder"]["value"] == "st:model-c"  # ragdiag.toml before pyproject.toml


def test_a_command_uses_flag_over_environment_over_file_and_records_the_source(here, monkeypatch):
    texts, ranked = write_tiny(here / "data")
    (here / "ragdiag.toml").write_text('model = "from-file"\nworkers = 2\n')
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as server:
        def generate(out: str, *extra: str) -> dict:
            done = CliRunner().invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--k", "2",
                                            "--base-url", server.base_url, "--cache-dir", "cache", "--no-progress",
                                            "--out", out, *extra])
            assert done.exit_code == 0, done.output
            return json.loads((here / f"{out}.manifest.json").read_text())["run_record"]["settings"]

        from_file = generate("a.jsonl")
        assert from_file["model"] == {"value": "from-file", "source": "file"}
        assert from_file["workers"] == {"value": "2", "source": "file"}
        assert from_file["base_url"]["source"] == "flag"
        assert {body["model"] for body in server.bodies} == {"from-file"}
        monkeypatch.setenv("RAGDIAG_MODEL", "from-env")
        assert generate("b.jsonl")["model"] == {"value": "from-env", "source": "env"}
        assert generate("c.jsonl", "--model", "from-flag")["model"] == {"value": "from-flag", "source": "flag"}
        assert {body["model"] for body in server.bodies} == {"from-file", "from-env", "from-flag"}


@pytest.mark.parametrize(("text", "needle"), [
    ('modle = "x"\n', "unknown setting 'modle'"),
    ('workers = "four"\n', "setting 'workers': expected an integer"),
    ("workers = 0\n", "setting 'workers': 0 is out of range [1, 256]"),
    ('model = ""\n', "setting 'model': expected a non-empty string"),
    ("model = \n", "not a readable TOML file"),
])
def test_a_bad_settings_file_is_one_line_naming_it(here, text, needle):
    (here / "ragdiag.toml").write_text(text)
    done = CliRunner().invoke(app, ["config", "show"])
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "ragdiag.toml" in lines[0] and needle in lines[0], done.stderr


def test_a_missing_config_file_is_named(here):
    done = CliRunner().invoke(app, ["--config", "nope.toml", "config", "show"])
    assert done.exit_code == 2 and "--config nope.toml: not found" in done.stderr


def test_integer_bounds_are_the_options_own():
    info = get_args(p.Workers)[1]
    assert BY_KEY["workers"].bounds == (info.min, info.max)


def test_every_setting_names_an_environment_variable_its_shared_option_reads():
    declared = {get_args(decl)[1].envvar for decl in (p.Model, p.BaseUrl, p.Workers, p.Prices, p.Embedder)}
    assert declared <= {s.env for s in SETTINGS}
    # the cache and data folders are read where their default is decided (config.py), after what a
    # batch folder recorded: an environment value never overrides the run's own cache
    assert get_args(p.CacheDir)[1].envvar is None
    assert {BY_KEY["cache_dir"].env, BY_KEY["data_dir"].env} == {"RAGDIAG_CACHE_DIR", "RAGDIAG_DATA"}


def test_config_show_prints_the_real_default_folders(here):
    """Issue 39: `config show` printed — for the folders; it names the paths used when nothing sets them."""
    from platformdirs import user_cache_dir, user_data_dir

    shown = _show()
    assert (shown["cache_dir"]["value"], shown["cache_dir"]["source"]) == (user_cache_dir("ragdiag"), "default")
    assert shown["data_dir"]["value"] == str(Path(user_data_dir("ragdiag")) / "data")
    text = CliRunner().invoke(app, ["config", "show"]).stdout
    assert user_cache_dir("ragdiag") in " ".join(text.split())


def _one_line(done, code: int = 2) -> str:
    assert done.exit_code == code, done.output
    assert "Traceback" not in done.output, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("text", ['tool = "ragdiag"\n', "tool = 3\n", '[tool]\nragdiag = "x"\n'])
def test_a_pyproject_whose_tool_is_not_a_table_breaks_nothing(here, text):
    (here / "pyproject.toml").write_text(text)
    done = CliRunner().invoke(app, ["config", "show", "--format", "json"])
    if "[tool]" in text:  # [tool.ragdiag] is there but is no table: named, one line
        assert "[tool.ragdiag] is not a table" in _one_line(done)
    else:  # no [tool.ragdiag] table: not a settings file
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout)["file"] is None


def test_markup_in_a_value_or_a_path_is_shown_as_text(here, monkeypatch):
    folder = here / "[bold]x[/x]"
    folder.mkdir(parents=True)
    (folder / "ragdiag.toml").write_text('embedder = "[/y]"\n')
    monkeypatch.setenv("RAGDIAG_MODEL", "[/x]")
    done = CliRunner().invoke(app, ["--config", str(folder / "ragdiag.toml"), "config", "show"])
    assert done.exit_code == 0, done.output
    assert "[/x]" in done.stdout and "[/y]" in done.stdout and "[bold]x[/x]" in done.stdout.replace("\n", "")


def test_a_bad_environment_value_names_the_variable_not_a_flag(here, monkeypatch):
    monkeypatch.setenv("RAGDIAG_WORKERS", "abc")
    line = _one_line(CliRunner().invoke(app, ["generate", "--texts", "t", "--ranked", "r", "--out", "o.jsonl"]))
    assert "RAGDIAG_WORKERS" in line and "'abc'" in line and "is not a valid integer" in line


def test_a_bad_environment_value_over_a_file_names_the_variable(here, monkeypatch):
    (here / "ragdiag.toml").write_text('model = "m"\n')
    monkeypatch.setenv("RAGDIAG_WORKERS", "999")
    line = _one_line(CliRunner().invoke(app, ["generate", "--texts", "t", "--ranked", "r", "--out", "o.jsonl"]))
    assert "RAGDIAG_WORKERS" in line and "'999'" in line and "256" in line


def test_a_value_that_looks_like_a_key_is_never_echoed(here, monkeypatch):
    secret = "sk-proj-abcdefghijklmnop1234"
    monkeypatch.setenv("RAGDIAG_WORKERS", secret)
    done = CliRunner().invoke(app, ["generate", "--texts", "t", "--ranked", "r", "--out", "o.jsonl"])
    line = _one_line(done)
    assert "RAGDIAG_WORKERS" in line and secret not in done.output and "sk-proj-abc" not in done.output
    monkeypatch.delenv("RAGDIAG_WORKERS")
    monkeypatch.setenv("RAGDIAG_MODEL", secret)
    shown = CliRunner().invoke(app, ["config", "show"])
    assert shown.exit_code == 0 and secret not in shown.output


def test_config_pyproject_reads_its_tool_ragdiag_table(here):
    (here / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ragdiag]\nmodel = "from-pyproject"\n')
    assert _show("--config", "pyproject.toml")["model"]["value"] == "from-pyproject"
    (here / "other").mkdir()
    (here / "other" / "pyproject.toml").write_text('[project]\nname = "y"\n')
    line = _one_line(CliRunner().invoke(app, ["--config", "other/pyproject.toml", "config", "show"]))
    assert "other/pyproject.toml" in line and "no [tool.ragdiag] table" in line


def test_an_empty_environment_value_is_unset_for_show_and_for_commands(here, monkeypatch):
    (here / "ragdiag.toml").write_text('model = "from-file"\n')
    monkeypatch.setenv("RAGDIAG_MODEL", "")
    monkeypatch.setenv("RAGDIAG_EMBEDDER", "")
    shown = _show()
    assert (shown["model"]["value"], shown["model"]["source"]) == ("from-file", "file")
    assert (shown["embedder"]["value"], shown["embedder"]["source"]) == (None, "default")
    texts, ranked = write_tiny(here / "data")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as server:
        done = CliRunner().invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--k", "2",
                                        "--base-url", server.base_url, "--cache-dir", "cache", "--no-progress",
                                        "--out", "a.jsonl"])
        assert done.exit_code == 0, done.output
        assert {body["model"] for body in server.bodies} == {"from-file"}  # what show said
    record = json.loads((here / "a.jsonl.manifest.json").read_text())["run_record"]["settings"]
    assert record["model"] == {"value": "from-file", "source": "file"}
    assert os.environ["RAGDIAG_MODEL"] == ""  # restored as it was


def test_the_hub_dataset_is_a_setting_that_config_show_lists_and_hf_reads(here, monkeypatch):
    """RAGDIAG_HF_REPO (which dataset ``hf:`` names) is shown by config show and settable in the file."""
    from ragdiag.data.loaders import HF_REPO_ENV

    assert BY_KEY["hf_repo"].env == HF_REPO_ENV
    assert (_show()["hf_repo"]["value"], _show()["hf_repo"]["source"]) == (None, "default")
    (here / "ragdiag.toml").write_text('hf_repo = "team/from-file"\n')
    assert (_show()["hf_repo"]["value"], _show()["hf_repo"]["source"]) == ("team/from-file", "file")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    done = CliRunner().invoke(app, ["generate", "--texts", "hf:", "--ranked", "hf:", "--out", "a.jsonl", "--base-url",
                                    "http://127.0.0.1:9/v1", "--no-progress"])
    assert done.exit_code == 2 and "from team/from-file" in done.stderr, done.output
    monkeypatch.setenv(HF_REPO_ENV, "team/from-env")
    assert (_show()["hf_repo"]["value"], _show()["hf_repo"]["source"]) == ("team/from-env", "env")
