"""Tables at 80 columns (what logs and pipes get) never split a number or a name across lines: the
real outputs of robustness, sweep, dynamic-k and cache stats, from their golden results (issue 34)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.report.fit_table import Fitted, column_groups, share_width

ROOT = Path(__file__).resolve().parents[2]
BORDERS = "│┃┏┓┗┛┡┩┠┨┣┫┳┻╇╈━─└┘┌┐┬┴├┤┼╭╮╰╯"


def _render(show, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True, no_color=True)
    show(console)
    return console.export_text()


def _cell_words(text: str) -> set[str]:
    """Every word inside a table row (between vertical rules) of a rendering."""
    words: set[str] = set()
    for line in text.splitlines():
        if "│" in line or "┃" in line:
            for cell in re.split(r"[│┃]", line):
                words.update(w for w in cell.split() if w.strip(BORDERS))
    return words


def _robustness(name):
    from ragdiag.report.robustness_table import print_robustness
    from ragdiag.results.robustness import RobustnessResult

    result = RobustnessResult.from_json(json.loads((ROOT / "tests/bench/golden" / name).read_text()))
    return lambda console: print_robustness(result, console)


def _sweep():
    from ragdiag.report.sweep_accuracy import print_relative_accuracy
    from ragdiag.report.sweep_report import print_sweep
    from ragdiag.results.sweep import SweepResult

    result = SweepResult.from_json(json.loads((ROOT / "tests/sweep/golden/sweep.json").read_text()))
    return lambda console: (print_sweep(result, console), print_relative_accuracy(result, console))


def _dynamic_k():
    from ragdiag.report.dynamic_k_report import render_table
    from ragdiag.results.dynamic_k import DynamicKResult

    result = DynamicKResult.from_json(json.loads((ROOT / "tests/evaluate/golden/dynamic_k.json").read_text()))
    return lambda console: render_table(result, console)


CASES = {"robustness ann": lambda: _robustness("ann.json"), "robustness runs": lambda: _robustness("runs.json"),
         "sweep": _sweep, "dynamic-k": _dynamic_k}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tables_at_80_columns_keep_every_number_and_name_whole(case):
    show = CASES[case]()
    wide, narrow = _render(show, 400), _render(show, 80)
    assert max(map(len, narrow.splitlines())) <= 80  # a word cut with "…" would be missing below
    missing = _cell_words(wide) - _cell_words(narrow)
    assert not missing, f"split or lost at 80 columns: {sorted(missing)[:10]}"


def test_cache_stats_at_80_columns(tmp_path):
    runner = CliRunner()
    cache = tmp_path / "cache"
    imported = runner.invoke(app, ["cache", "import", str(ROOT / "fixtures/llm-cache/calls.jsonl"),
                                   "--cache-dir", str(cache)])
    assert imported.exit_code == 0, imported.output
    narrow = runner.invoke(app, ["cache", "stats", "--cache-dir", str(cache)], env={"COLUMNS": "80"}).output
    wide = runner.invoke(app, ["cache", "stats", "--cache-dir", str(cache)], env={"COLUMNS": "300"}).output
    assert "…" not in narrow and max(map(len, narrow.splitlines())) <= 80
    assert _cell_words(wide) <= _cell_words(narrow) and "ragdiag-test-server" in narrow


def test_a_table_too_wide_is_folded_into_parts_repeating_the_key_column():
    table = Table(title="wide")
    for name in ("point", *(f"metric-{i}" for i in range(12))):
        table.add_column(name)
    table.add_row("hnsw efSearch=16", *(f"0.{i}123 [0.1{i}, 0.9{i}]" for i in range(12)))
    text = _render(lambda console: console.print(Fitted(table)), 80)
    parts = text.count("┃ point")
    assert parts > 1 and text.count("(continued)") == parts - 1
    assert {f"metric-{i}" for i in range(12)} <= _cell_words(text) and "efSearch=16" in text


def test_column_groups_and_widths():
    assert column_groups([10, 20, 20, 20], lambda n: 3 * n + 1, 60, keys=1) == [[0, 1, 2], [0, 3]]
    assert share_width([4, 6], [10, 10], 30) == [10, 10]  # all fit: natural widths
    assert share_width([4, 6], [14, 6], 10) == [4, 6]  # no room left: minimums
    assert share_width([4, 6], [14, 26], 20) == [7, 13]  # the spare shared by what each still wants


def test_correlate_at_80_columns(tmp_path):
    runner = CliRunner()
    args = ["correlate", "--dataset", "all", "--offline"]
    narrow = runner.invoke(app, args, env={"COLUMNS": "80"}).stdout
    wide = runner.invoke(app, args, env={"COLUMNS": "400"}).stdout
    assert max(map(len, narrow.splitlines())) <= 80
    assert not _cell_words(wide) - _cell_words(narrow)  # segment names, "runner-up", numbers: whole
