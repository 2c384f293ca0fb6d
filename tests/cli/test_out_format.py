"""One ``--out`` rule for every result: the suffix picks the format (.json, .csv, .txt/.md = the
table), ``--format`` overrides, other suffixes get JSON; a suffix a command cannot write is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.errors import RagdiagError
from ragdiag.io.out_format import out_format

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "graded-utility"
runner = CliRunner()


@pytest.mark.parametrize(("name", "fmt", "expected"), [
    ("r.json", None, "json"), ("r.csv", None, "csv"), ("r.txt", None, "table"), ("r.MD", None, "table"),
    ("r.out", None, "json"), ("r", None, "json"), ("r.json", "table", "table"), ("r.txt", "csv", "csv"),
])
def test_rule(name, fmt, expected):
    assert out_format(Path(name), fmt) == expected


def test_a_suffix_the_command_cannot_write_is_refused():
    with pytest.raises(RagdiagError, match=r"--out r.csv: this command writes no CSV file; use .txt/.md or .json"):
        out_format(Path("r.csv"), None, ("table", "json"))


def _evaluate(out: Path, *extra: str):
    return runner.invoke(app, ["evaluate", "--run", str(FIX / "bm25.jsonl"), "--qrels", str(FIX / "qrels.tsv"),
                               "--k", "2", "--pool-depth", "5", "--bootstrap", "0", "--out", str(out), *extra])


def test_evaluate_follows_the_suffix(tmp_path):
    for name, check in (("e.json", lambda t: json.loads(t)["runs"]), ("e.csv", lambda t: t.startswith("kind,run,")),
                        ("e.txt", lambda t: t.startswith("ragdiag evaluate ·"))):
        result = _evaluate(tmp_path / name)
        assert result.exit_code == 0, result.output
        assert check((tmp_path / name).read_text()), name
    result = _evaluate(tmp_path / "forced.json", "--format", "table")
    assert result.exit_code == 0 and not (tmp_path / "forced.json").read_text().lstrip().startswith("{")


def test_robustness_writes_the_table_for_txt_and_refuses_csv(tmp_path):
    args = ["robustness", "--run", str(FIX / "bm25.jsonl"), "--qrels", str(FIX / "qrels.tsv"), "--k", "2", "--out"]
    result = runner.invoke(app, [*args, str(tmp_path / "r.txt")])
    assert result.exit_code == 0 and "Robustness-δ@2" in (tmp_path / "r.txt").read_text()
    result = runner.invoke(app, [*args, str(tmp_path / "r.csv")])
    assert result.exit_code == 2 and not (tmp_path / "r.csv").exists()
    assert result.output.strip().splitlines() == [
        f"ragdiag: error: --out {tmp_path / 'r.csv'}: this command writes no CSV file; use .txt/.md or .json (or --format)"]
