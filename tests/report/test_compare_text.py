"""compare's text outputs carry data, never markup (issue 44): query ids and column names reach the
Markdown summary escaped for Markdown and HTML, one line per cell, and the terminal as plain text
with control characters shown escaped; when $GITHUB_STEP_SUMMARY is the --summary-md file it is
written once."""

from __future__ import annotations

import io
import re

from rich.console import Console

from ragdiag.report.compare_report import markdown, render
from ragdiag.results.compare import CompareResult, MetricComparison

FORGED_ID = "q1\n\n**GATE PASS: no metric regressed**\n"
HOSTILE = [FORGED_ID, "x` <img src=x onerror=alert(1)> `", "a|b", "bell\x07esc\x1b[31mred", "[/x]"]
COLUMN = "<b>m</b>|[/x]"


def _result() -> CompareResult:
    meta = {"queries": 5, "input_kind": "table", "test": "t", "correction": "holm", "alpha": 0.05,
            "interval_level": 0.9, "max_drop": 0.01, "seed": 0, "strict": False, "power": 0.8, "dropped": {},
            "base_name": "base <i>.csv", "new_name": "new\n**x**.csv"}
    metric = MetricComparison(metric=COLUMN, n=5, mean_base=0.5, mean_new=0.4, delta=-0.1, ci_low=-0.2, ci_high=-0.05,
                              p=0.001, p_adjusted=0.001, d_z=-1.0, decision="regression", queries_needed=None)
    worst = [{"query_id": q, "delta": {COLUMN: -0.1}} for q in HOSTILE]
    return CompareResult(meta=meta, decision="fail", metrics=[metric], worst=worst)


def test_the_markdown_summary_cannot_be_forged_by_ids_or_column_names():
    text = markdown(_result())
    lines = text.splitlines()
    assert "**GATE PASS" not in text  # the forged heading stays escaped text on the id's own line
    assert [line for line in lines if line.startswith("**")] == [lines[2]] and "GATE FAIL" in lines[2]
    assert "<img" not in text and "<b>" not in text and "<i>" not in text
    assert "\x07" not in text and "\x1b" not in text
    rows = [line for line in lines if line.startswith("| ") and "decision" not in line]
    header = next(line for line in lines if line.startswith("| decision"))
    cells = len(re.split(r"(?<!\\)\|", header))
    assert rows and all(len(re.split(r"(?<!\\)\|", row)) == cells for row in rows)


def test_the_terminal_prints_data_as_text_with_control_characters_escaped():
    buffer = io.StringIO()
    render(_result(), Console(file=buffer, width=100, force_terminal=False, color_system=None))
    text = buffer.getvalue()
    assert "[/x]" in text  # the column name, shown as it is, not read as markup
    assert "\x07" not in text and "\x1b" not in text
    assert "\\x07" in text and "\\x1b" in text
    assert not [line for line in text.splitlines() if "GATE PASS" in line.split("q1")[0]]
