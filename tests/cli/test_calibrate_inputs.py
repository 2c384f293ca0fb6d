"""Issue 39: ``calibrate --graded`` reads the graded file as ``correlate`` does — JSON, JSON lines, or the
Parquet ``grade --out graded.parquet`` writes — and a CSV/TSV table is one error saying what it looks like
and what reads it (before: 'not UTF-8 text' for Parquet, 'malformed JSON' for CSV)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "cli" / "golden"


def _calibrate(graded: Path, out: Path):
    return CliRunner().invoke(app, ["calibrate", "--graded", str(graded), "--human",
                                    str(GOLDEN / "calibrate_human.jsonl"), "--out", str(out), "--format", "json"])


def test_a_parquet_graded_file_gives_the_json_files_result(tmp_path):
    pytest.importorskip("pyarrow")
    from ragdiag.data.graded_parquet import graded_arrow_table, graded_parquet_records
    from ragdiag.io.writer import write_parquet

    records = json.loads((GOLDEN / "calibrate_graded.json").read_text(encoding="utf-8"))
    parquet = tmp_path / "graded.parquet"
    write_parquet(parquet, graded_arrow_table(records))
    assert graded_parquet_records(parquet) == records  # every key back as written
    from_json, from_parquet = _calibrate(GOLDEN / "calibrate_graded.json", tmp_path / "a.json"), \
        _calibrate(parquet, tmp_path / "b.json")
    assert from_json.exit_code == 0 and from_parquet.exit_code == 0, from_parquet.output
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert a["agreement"] == b["agreement"] and a["estimates"] == b["estimates"]


def test_a_csv_table_says_what_it_looks_like_and_what_reads_it(tmp_path):
    table = tmp_path / "grades.csv"
    table.write_text("qid,ndcg,grade\nq1,0.5,3\n")
    res = _calibrate(table, tmp_path / "out.json")
    assert res.exit_code == 2 and res.output.count("ragdiag: error:") == 1 and "Traceback" not in res.output
    assert "this looks like CSV with columns qid, ndcg, grade, not a graded file" in res.output
    assert "`ragdiag correlate --table`" in res.output and not (tmp_path / "out.json").exists()
