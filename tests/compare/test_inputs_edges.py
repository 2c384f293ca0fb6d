"""compare's inputs are checked on every row and every header (issue 44): a JSON ``true`` in row 5,
a CSV column whose first cell is empty, two CSV columns of one name, a graded file whose ``E`` is a
list, cut-offs out of range. Each is one ``ragdiag: error:`` line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.compare.test_compare_cli import RUNS

runner = CliRunner()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _rows(n: int = 8, shift: float = 0.0) -> list[dict]:
    return [{"query_id": f"q{i}", "m": 0.5 + 0.01 * i + shift, "r": 0.7} for i in range(n)]


def _csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _expect_refusal(tmp_path: Path, args: list[str], *words: str) -> str:
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["compare", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()
    return lines[0]


def test_a_boolean_in_a_later_row_is_refused(tmp_path):
    rows = _rows()
    rows[4]["m"] = True
    base = _jsonl(tmp_path / "b.jsonl", _rows())
    new = _jsonl(tmp_path / "n.jsonl", rows)
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "n.jsonl", "record 4", "'m'")


def test_a_column_whose_first_cell_is_empty_is_not_dropped_silently(tmp_path):
    lines = ["query_id,m,r"] + [f"q{i},{'' if i == 0 else 0.5},0.7" for i in range(8)]
    base = _csv(tmp_path / "b.csv", "\n".join(lines) + "\n")
    new = _csv(tmp_path / "n.csv", "\n".join(lines).replace("0.7", "0.6") + "\n")
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "b.csv", "record 0", "'m'", "missing")


def test_a_column_mixing_numbers_and_text_is_named(tmp_path):
    lines = ["query_id,m,r"] + [f"q{i},{'n/a' if i == 5 else 0.5},0.7" for i in range(8)]
    base = _csv(tmp_path / "b.csv", "\n".join(lines) + "\n")
    new = _csv(tmp_path / "n.csv", "\n".join(lines) + "\n")
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "b.csv", "record 5", "'m'", "--metrics")


def test_two_columns_of_one_name_are_refused(tmp_path):
    lines = ["query_id,m,m"] + [f"q{i},0.5,0.{i}" for i in range(8)]
    base = _csv(tmp_path / "b.csv", "\n".join(lines) + "\n")
    new = _csv(tmp_path / "n.csv", "\n".join(lines) + "\n")
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "b.csv", "'m'", "twice")


def test_a_jsonl_column_that_appears_after_the_first_row_is_checked(tmp_path):
    rows = _rows()
    rows[3]["late"] = 0.4
    base = _jsonl(tmp_path / "b.jsonl", rows)
    new = _jsonl(tmp_path / "n.jsonl", rows)
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "b.jsonl", "'late'", "missing")


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}])
def test_a_graded_file_whose_configuration_is_not_a_scalar_is_refused(tmp_path, value):
    rows = [{"id": f"q{i}", "grade": 3, "E": value, "K": 5} for i in range(8)]
    base = _jsonl(tmp_path / "b.jsonl", rows)
    new = _jsonl(tmp_path / "n.jsonl", rows)
    _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "b.jsonl", "record 0", "'E'")


@pytest.mark.parametrize("metrics", ["ndcg@²", "ndcg@99999999999", "ndcg@0", "ndcg@ 10x"])
def test_cut_offs_are_integers_in_a_checked_range(tmp_path, metrics):
    _expect_refusal(tmp_path, [*RUNS, "--metrics", metrics], "--metrics")


def test_an_id_with_a_line_break_stays_on_the_one_error_line(tmp_path):
    rows = _rows()
    base = _jsonl(tmp_path / "b.jsonl", rows)
    new = _jsonl(tmp_path / "n.jsonl", [{**rows[0], "query_id": "q0\nGATE PASS"}, *rows[1:]])
    line = _expect_refusal(tmp_path, ["--base", str(base), "--new", str(new)], "--allow-missing")
    assert "'q0\\nGATE PASS'" in line
