"""The judge's repeated grades (issue 29): a row with another number of repeats or none is kept and
named, a malformed ``grades`` is one error line, and Parquet carries ``grades`` like JSON (written as
a list column, read columnar; the JSON text column of earlier versions read too), so ICC, α and the
corrected correlations survive both."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.graded_parquet import graded_arrow_table, is_parquet
from ragdiag.data.loaders import load_graded_file
from ragdiag.errors import DataError
from ragdiag.io.writer import write_json, write_parquet
from tools.synthetic import synthetic_graded


def _records(rows: int = 120) -> list[dict]:
    """``rows`` graded rows judged 3 times (grade = the mean), as ``grade --repeats 3`` writes them."""
    rng = np.random.default_rng(5)
    records = [r for r in synthetic_graded(n_queries=12, seed=2, keep=0.9) if r["grade"] is not None][:rows]
    for record in records:
        grades = np.clip(np.round(record["grade"] + rng.normal(0, 0.8, 3)), 1, 5).astype(int).tolist()
        record["grades"], record["grade"] = grades, float(np.mean(grades))
    return records


def _seven(records):
    records[5]["grades"] = [1, 2, 3, 4, 5, 4, 3]
    records[5]["grade"] = 22 / 7


def _none(records):
    del records[5]["grades"]


def _null_items(records):
    records[5]["grades"] = [4, None, 5]
    records[5]["grade"] = 4.5


def _correlate(path: Path) -> dict:
    done = CliRunner().invoke(app, ["correlate", "--graded", str(path), "--segments", "pooled", "--min-samples", "20",
                                    "--format", "json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _write(tmp_path: Path, records: list[dict], suffix: str) -> Path:
    path = tmp_path / f"graded{suffix}"
    if is_parquet(path):
        write_parquet(path, graded_arrow_table(records))
    else:
        write_json(path, records)
    return path


@pytest.mark.parametrize("tamper, note", [
    (_seven, "119 rows with 3, 1 row with 7"),
    (_none, "119 rows with 3, 1 row with no repeats (its grade counts as its one rating)"),
    (_null_items, "119 rows with 3, 1 row with 2"),
])
def test_a_row_with_other_repeats_keeps_the_reliability_and_is_named(tmp_path, tamper, note):
    records = _records()
    tamper(records)
    reliability = _correlate(_write(tmp_path, records, ".json"))["judge_reliability"]
    assert reliability["icc_1_k"] is not None and reliability["alpha_ordinal"] is not None
    assert note in reliability["ratings_note"] and "first: id '" in reliability["ratings_note"]
    assert _correlate(_write(tmp_path, records, ".parquet"))["judge_reliability"] == reliability


def test_balanced_repeats_give_no_note_and_parquet_equals_json(tmp_path):
    records = _records()
    from_json = _correlate(_write(tmp_path, records, ".json"))
    from_parquet = _correlate(_write(tmp_path, records, ".parquet"))
    assert "ratings_note" not in from_json["judge_reliability"]
    assert from_parquet["judge_reliability"] == from_json["judge_reliability"]
    corrected = [row["spearman"]["corrected"] for row in from_json["results"]]
    assert corrected and [row["spearman"]["corrected"] for row in from_parquet["results"]] == corrected
    table = load_graded_file(tmp_path / "graded.parquet")
    assert table.ratings_source == "repeats" and table.ratings.shape == (120, 3)
    assert np.array_equal(table.ratings, load_graded_file(tmp_path / "graded.json").ratings)
    assert pq.read_schema(tmp_path / "graded.parquet").field("grades").type == pa.list_(pa.float64())


def test_parquet_with_grades_as_json_text_from_an_earlier_version_is_read(tmp_path):
    records = _records()
    _seven(records)
    path = _write(tmp_path, records, ".parquet")
    table = pq.read_table(path)
    legacy = table.set_column(table.schema.get_field_index("grades"), pa.field("grades", pa.string()),
                              pa.array([json.dumps(r["grades"]) for r in records]))
    pq.write_table(legacy, tmp_path / "legacy.parquet")
    assert np.array_equal(load_graded_file(tmp_path / "legacy.parquet").ratings, load_graded_file(path).ratings,
                          equal_nan=True)


def test_null_grade_rows_are_left_out_of_the_ratings_on_both_paths(tmp_path):
    records = _records()
    records[3]["grade"], records[3]["grades"] = None, [None, None, None]
    for suffix in (".json", ".parquet"):
        table = load_graded_file(_write(tmp_path, records, suffix))
        assert table.ratings.shape == (119, 3) and len(table) == 119


@pytest.mark.parametrize("value", ["3,4,3", [3, "4"], [3, 9, 2], {"a": 3}])
def test_a_malformed_grades_is_one_line_naming_the_record(tmp_path, value):
    records = _records()
    records[5]["grades"] = value
    for suffix in (".json", ".parquet"):
        path = _write(tmp_path, records, suffix)
        with pytest.raises(DataError, match=rf"^{path}: record 6: field 'grades': "):
            load_graded_file(path)
        done = CliRunner().invoke(app, ["correlate", "--graded", str(path), "--segments", "pooled"])
        assert done.exit_code == 2 and done.output.count("\n") == 1 and "record 6: field 'grades'" in done.output


def test_a_second_judge_is_read_from_parquet_as_from_json(tmp_path):
    """``grade --second-judge`` with one repeat: ``grades`` holds one grade, ``judges`` both judges'."""
    rng = np.random.default_rng(1)
    records = _records()
    for record in records:
        first, second = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        record["grades"], record["grade"] = [first], float(first)
        record["judges"] = {"judge-a": [first], "judge-b": [second]}
    from_json = load_graded_file(_write(tmp_path, records, ".json"))
    from_parquet = load_graded_file(_write(tmp_path, records, ".parquet"))
    assert from_json.ratings_source == from_parquet.ratings_source == "judges"
    assert np.array_equal(from_json.ratings, from_parquet.ratings)
