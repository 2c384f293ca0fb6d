"""Deprecated spellings keep working (hidden, one note line), and the twin commands are one command."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli.aliases import DEPRECATED
from ragdiag.cli.usage import rewrite_deprecated

# click < 8.2 mixes stderr into stdout unless told not to
runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()
ROOT = typer.main.get_command(app)


def _command(path: str):
    command = ROOT
    for name in path.split():
        command = command.commands[name]
    return command


def _alias_cases():
    for path, table in DEPRECATED.items():
        for old, new in table.items():
            yield path, old, new


@pytest.mark.parametrize("path, old, new", list(_alias_cases()), ids=lambda v: v if isinstance(v, str) else "fn")
def test_every_alias_names_an_option_of_its_command_and_is_hidden(path, old, new):
    command = _command(path)
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    target = new if isinstance(new, str) else new[0] if isinstance(new, tuple) else new("x.npy") or new("30")
    assert target in options, f"{path}: {old} → {target}, which is not an option"
    if old not in options:  # a pure alias: not shown by --help
        help_text = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "240"}).stdout
        assert f"{old} " not in help_text.replace(target, "")


def test_rewrite_prints_one_note_per_old_flag_and_keeps_values():
    notes: list[str] = []
    args = ["index", "build", "--out", "idx", "--index=hnsw:M=8", "--corpus", "c.jsonl", "--out", "idx2", "--", "--out"]
    rewritten = rewrite_deprecated(ROOT, args, notes.append)
    assert rewritten == ["index", "build", "--out-dir", "idx", "--index-spec=hnsw:M=8", "--corpus", "c.jsonl",
                         "--out-dir", "idx2", "--", "--out"]
    assert notes == ["ragdiag: note: --out is deprecated here, use --out-dir",
                     "ragdiag: note: --index is deprecated here, use --index-spec"]


def test_a_flag_that_became_a_value():
    notes: list[str] = []
    assert rewrite_deprecated(ROOT, ["index", "build", "--no-cache", "--corpus", "c"], notes.append) == [
        "index", "build", "--cache", "off", "--corpus", "c"]
    assert notes == ["ragdiag: note: --no-cache is deprecated here, use --cache off"]


def test_robustness_queries_means_vectors_only_for_npy():
    notes: list[str] = []
    assert rewrite_deprecated(ROOT, ["robustness", "--queries", "q.npy"], notes.append)[1] == "--query-vectors"
    assert rewrite_deprecated(ROOT, ["robustness", "--queries", "q.jsonl"], notes.append)[1] == "--queries"
    assert rewrite_deprecated(ROOT, ["correlate", "--out", "x.json"], notes.append) == ["correlate", "--out", "x.json"]
    assert len(notes) == 1


def test_old_spelling_runs_like_the_new_one(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "b.npy", rng.standard_normal((60, 8)).astype(np.float32))
    np.save(tmp_path / "q.npy", rng.standard_normal((4, 8)).astype(np.float32))
    common = ["--k", "5", "--latency-queries", "2", "--metric", "l2", "--format", "json"]
    old = runner.invoke(app, ["robustness", "--base", str(tmp_path / "b.npy"), "--queries", str(tmp_path / "q.npy"),
                              "--index", "flat", "--repeats", "1", *common])
    new = runner.invoke(app, ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors",
                              str(tmp_path / "q.npy"), "--index-spec", "flat", "--qps-repeats", "1", *common])
    assert old.exit_code == 0 and new.exit_code == 0, old.output + new.output
    lines = [[line for line in r.stderr.splitlines() if line.strip()] for r in (old, new)]
    assert lines[0] == ["ragdiag: note: --base is deprecated here, use --base-vectors",
                                       "ragdiag: note: --queries is deprecated here, use --query-vectors",
                                       "ragdiag: note: --index is deprecated here, use --index-spec",
                                       "ragdiag: note: --repeats is deprecated here, use --qps-repeats"]
    assert lines[1] == []
    recalls = [[p["recall_mean"] for p in json.loads(r.stdout)["points"]] for r in (old, new)]
    assert recalls[0] == recalls[1] == [1.0]


def _signature(command):
    return [(p.name, tuple(p.opts), p.default, p.required, p.metavar) for p in command.params]


@pytest.mark.parametrize("twin, original", [("probe noise", "noise"), ("index search", "retrieve")])
def test_twin_commands_are_the_same_command(twin, original):
    a, b = _command(twin), _command(original)
    assert _signature(a) == _signature(b)
    assert a.callback.__wrapped__ is b.callback.__wrapped__  # typer wraps the one function twice
    bad = ["--k", "0"]
    out_a = runner.invoke(app, [*twin.split(), *bad]).stderr
    out_b = runner.invoke(app, [*original.split(), *bad]).stderr
    assert out_a.replace(f"ragdiag {twin} --help", "HELP") == out_b.replace(f"ragdiag {original} --help", "HELP")
    assert "--k: '0' is out of range" in out_a
