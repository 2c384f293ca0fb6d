"""``--out`` never hides the terminal result: the table still prints, then one ``wrote PATH`` line
on stderr; ``--quiet`` leaves only that line. ``--format`` exists on every command that prints a
result (``--json`` kept as its alias where it was) (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
GU = FIX / "graded-utility"
DK = ROOT / "tests/evaluate/golden/dynamic_k"
CAL = ROOT / "tests/cli/golden"
runner = CliRunner()

# command → (arguments, a phrase its table prints, --out suffix)
CASES = {
    "correlate": (["correlate", "--dataset", "msmarco", "--offline"], "SIMULATED GRADES", ".json"),
    "evaluate": (["evaluate", "--run", str(GU / "bm25.jsonl"), "--qrels", str(GU / "qrels.tsv"), "--k", "2",
                  "--pool-depth", "5", "--bootstrap", "0"], "ragdiag evaluate ·", ".csv"),
    "robustness": (["robustness", "--run", str(GU / "bm25.jsonl"), "--qrels", str(GU / "qrels.tsv"), "--k", "2",
                    "--bootstrap", "0"], "Robustness-δ@2", ".txt"),
    "clq": (["clq", "--configs", str(FIX / "clq/paper001-scenarios.csv"), "--slo-ms", "400", "--budget", "1"],
            "config", ".json"),
    "dynamic-k": (["dynamic-k", "--qrels", str(DK / "qrels.tsv"), "--run-low", str(DK / "low.jsonl"), "--run-high",
                   str(DK / "high.jsonl"), "--k-low", "10", "--k-high", "20", "--ks", "5,10", "--steps", "4",
                   "--bootstrap", "0"], "per policy", ".json"),
    "calibrate": (["calibrate", "--graded", str(CAL / "calibrate_graded.json"), "--human",
                   str(CAL / "calibrate_human.jsonl")], "ragdiag calibrate ·", ".json"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_keeps_the_table_and_says_where_it_wrote(name, tmp_path):
    args, phrase, suffix = CASES[name]
    out = tmp_path / f"result{suffix}"
    done = runner.invoke(app, [*args, "--out", str(out)], env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    assert phrase in done.stdout and out.stat().st_size > 0
    assert [line for line in done.stderr.splitlines() if line.startswith("wrote ")] == [f"wrote {out}"]
    if name == "calibrate":  # 15 s a run: --quiet is checked on the others
        return
    quiet = tmp_path / f"quiet{suffix}"
    done = runner.invoke(app, [*args, "--out", str(quiet), "--quiet"], env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    assert done.stdout == "" and f"wrote {quiet}" in done.stderr.splitlines()


def test_format_json_without_out_prints_the_result_json():
    for name in ("dynamic-k", "clq"):
        done = runner.invoke(app, [*CASES[name][0], "--format", "json"])
        assert done.exit_code == 0, done.output
        assert isinstance(json.loads(done.stdout), dict), name


def test_format_json_with_out_writes_and_prints_json(tmp_path):
    out = tmp_path / "r.txt"
    done = runner.invoke(app, [*CASES["robustness"][0], "--out", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["points"] == json.loads(done.stdout)["points"]
    assert done.stderr.splitlines()[-1] == f"wrote {out}"


@pytest.mark.parametrize("args", [["data", "list"], ["cache", "stats"]])
def test_json_is_an_alias_of_format_json(args, tmp_path):
    extra = ["--dir", str(tmp_path)] if args[0] == "data" else ["--cache-dir", str(tmp_path)]
    if args[0] == "cache":
        imported = runner.invoke(app, ["cache", "import", str(FIX / "llm-cache/calls.jsonl"), "--cache-dir", str(tmp_path)])
        assert imported.exit_code == 0, imported.output
    by_format = runner.invoke(app, [*args, *extra, "--format", "json"])
    by_alias = runner.invoke(app, [*args, *extra, "--json"])
    assert by_format.exit_code == by_alias.exit_code == 0, by_format.output
    assert json.loads(by_format.stdout) == json.loads(by_alias.stdout)


def test_every_command_that_prints_a_result_table_has_format_and_every_result_out_has_quiet():
    root = typer.main.get_command(app)
    printing = {("correlate",), ("robustness",), ("evaluate",), ("noise",), ("clq",), ("dynamic-k",), ("calibrate",),
                ("probe", "names"), ("probe", "noise"), ("cache", "stats"), ("data", "list"), ("data", "get"), ("batch", "status")}
    for path in printing:
        command = root
        for name in path:
            command = command.commands[name]
        options = {opt for param in command.params for opt in param.opts}
        assert "--format" in options, path
        assert "--out" not in options or "--quiet" in options, path
