"""Issue 17: ``ragdiag calibrate`` writes the same result, sheet and table as before the refactor
(tests/cli/golden/, written by the earlier code), and its result reads back as an object."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.results.calibrate import CalibrateResult
from tests.golden import comparable, same_text

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path("tests/cli/golden")
GOLDEN_SHEET = "/tmp/hp_sheet.csv"  # where the golden run wrote its --suggest sheet (named in the result)


def test_the_result_round_trips():
    doc = json.loads((REPO / GOLDEN / "calibrate.json").read_text(encoding="utf-8"))
    result = CalibrateResult.from_json(doc)
    assert result.to_json() == doc
    assert result.agreement.items == 30 and result.estimates.mean_grade[0].group == "all"


def test_rerun_writes_the_golden_result_sheet_and_table(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out, sheet = tmp_path / "calibrate.json", tmp_path / "sheet.csv"
    done = CliRunner().invoke(app, ["calibrate", "--graded", str(GOLDEN / "calibrate_graded.json"), "--human",
                                    str(GOLDEN / "calibrate_human.jsonl"), "--out", str(out), "--suggest", "5",
                                    "--sheet", str(sheet)])
    assert done.exit_code == 0, done.output
    new = json.loads(out.read_text())
    old = json.loads((REPO / GOLDEN / "calibrate.json").read_text())
    new["suggested"]["sheet"] = GOLDEN_SHEET  # the one path that differs between the two runs
    assert comparable(new) == comparable(old)
    assert same_text(sheet.read_text(), (REPO / GOLDEN / "calibrate_sheet.csv").read_text())
    words = done.stdout.replace(str(sheet), GOLDEN_SHEET).split()  # the path's length moves the last line's wrap
    assert same_text(" ".join(words), " ".join((REPO / GOLDEN / "calibrate.txt").read_text(encoding="utf-8").split()))
