"""``ragdiag calibrate`` on hostile but valid input (issue 29): every grade the same, a 150,000-character
answer in the sheet, answers and ids a spreadsheet would run as formulas."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.io.text_input import csv_rows
from tools.synthetic import synthetic_graded

runner = CliRunner()
KEY = ("id", "E", "K", "Nc", "Np")


def _run(*args) -> object:
    return runner.invoke(app, ["calibrate", *map(str, args)])


def _graded(n_queries: int = 3, constant: int | None = None) -> list[dict]:
    rng = np.random.default_rng(3)
    records = [r for r in synthetic_graded(n_queries=n_queries, seed=2, keep=1.0) if r["grade"] is not None]
    for record in records:
        grades = [constant] * 3 if constant else rng.integers(1, 6, 3).tolist()
        record["grades"], record["grade"] = grades, float(np.mean(grades))
    return records


def test_every_grade_3_gives_exact_numbers_and_a_file_report_reads(tmp_path):
    records = _graded(constant=3)
    graded, human, out = tmp_path / "graded.json", tmp_path / "human.jsonl", tmp_path / "calib.json"
    graded.write_text(json.dumps(records))
    human.write_text("".join(json.dumps({k: r[k] for k in KEY} | {"grade": 3}) + "\n" for r in records[:30]))
    done = _run("--graded", graded, "--human", human, "--out", out)
    assert done.exit_code == 0, done.output
    estimates = json.loads(out.read_text())["estimates"]
    overall = estimates["mean_grade"][0]
    assert overall["ppi"] == {"estimate": 3.0, "ci": [3.0, 3.0]}
    assert all(s[kind] == {"estimate": 0.0, "ci": [0.0, 0.0]} for s in estimates["slopes"]
               for kind in ("ppi", "human_only", "judge_only"))
    assert "3.000 [3.000, 3.000]" in done.stdout and "may not change with nDCG" in " ".join(done.stdout.split())
    page = tmp_path / "report.html"
    shown = runner.invoke(app, ["report", str(out), "--out", str(page)])
    assert shown.exit_code == 0, shown.output


def test_the_sheet_neutralises_formulas_holds_a_long_answer_and_reads_back_as_is(tmp_path):
    records = _graded(n_queries=2)[:24]
    records[0]["answer_topK"] = "=HYPERLINK(\"http://evil.example\",\"click\")"
    records[1]["answer_ideal"] = "+1-2"
    records[2]["answer_topK"] = "long " * 30_000  # 150,000 characters
    for record in records[3:6]:
        record["answer_topK"] = "@SUM(A1:A2)"
    for record in records:
        record["id"] = "-" + record["id"]
    graded, sheet = tmp_path / "graded.json", tmp_path / "sheet.csv"
    graded.write_text(json.dumps(records))
    done = _run("--graded", graded, "--suggest", len(records), "--sheet", sheet, "--keep-degenerate")
    assert done.exit_code == 0, done.output
    raw = sheet.read_text()
    rows = [row for _, row in csv_rows(sheet)]  # as a spreadsheet would see the cells
    assert len(rows) == len(records)
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values())
    assert "'=HYPERLINK" in raw and "'+1-2" in raw and "'@SUM" in raw and "'-A-0" in raw
    for row in rows[:12]:
        row["grade"] = "4"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert any(len(row["candidate_answer"]) == 150_000 for row in rows)
    back = _run("--graded", graded, "--human", sheet, "--keep-degenerate")
    assert back.exit_code == 0, back.output
    assert "12 with a human grade" in " ".join(back.stdout.split())


@pytest.mark.parametrize("header", ["id,E,K,Nc,Np,grade,grade", "grade,id,E,K,Nc,Np,grade"])
def test_a_human_csv_with_two_grade_columns_is_refused(tmp_path, header):
    records = _graded(n_queries=2)
    graded, human, out = tmp_path / "graded.json", tmp_path / "human.csv", tmp_path / "calib.json"
    graded.write_text(json.dumps(records))
    rows = ["{id},{E},{K},{Nc},{Np},3,5".format(**r) if header.startswith("id") else "3,{id},{E},{K},{Nc},{Np},5".format(**r)
            for r in records[:12]]
    human.write_text(header + "\n" + "\n".join(rows) + "\n")
    before = human.read_bytes()
    done = _run("--graded", graded, "--human", human, "--out", out)
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert f"{human}: line 1: the header repeats the column name(s) 'grade'" in done.output
    assert human.read_bytes() == before and not out.exists()
