"""Graded-sample loading: validation messages name file, record and field; hub loader on a local copy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.data.loaders import load_graded_dataset, load_graded_file, load_graded_hub, read_json_records
from ragdiag.data.synthetic import synthetic_graded
from ragdiag.errors import DataError, RagdiagError
from ragdiag.metrics.measures import ndcg_from_in_k


def _write(path: Path, records) -> Path:
    path.write_text(json.dumps(records))
    return path


@pytest.fixture
def records():
    return synthetic_graded(n_queries=3, seed=5, configs=(("M", 30, 3, range(2, 8)), ("A", 50, 2, range(2, 5))))


def test_columns_match_records(records):
    table = build_graded_table(records, "x", GradedSource("x"))
    assert len(table) == len(records)
    assert table.subset_names == ["A", "M"]
    assert list(table.n) == [sum(r["inK"]) for r in records]
    assert np.allclose(table.ndcg, [ndcg_from_in_k(r["inK"]) for r in records])
    assert list(table.nn) == [r["K"] - sum(r["inK"]) for r in records]


def test_jsonl_and_gzip_are_read(tmp_path, records):
    import gzip

    lines = "\n".join(json.dumps(r) for r in records)
    (tmp_path / "g.jsonl").write_text(lines)
    with gzip.open(tmp_path / "g.json.gz", "wt") as handle:
        handle.write(json.dumps(records))
    assert len(read_json_records(tmp_path / "g.jsonl")) == len(records)
    assert len(load_graded_file(tmp_path / "g.json.gz")) == len(records)


def test_null_grades_are_skipped_and_counted(tmp_path, records):
    records[0]["grade"] = None
    records[3]["grade"] = None
    table = load_graded_file(_write(tmp_path / "g.json", records))
    assert len(table) == len(records) - 2 and table.skipped_missing_grade == 2


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda r: r.pop("inK"), "record 4: field 'inK': missing"),
        (lambda r: r.update(inK=r["inK"][:-1]), "record 4: field 'inK': has"),
        (lambda r: r.update(grade=7), "record 4: field 'grade': 7 is not a grade between 1 and 5"),
        (lambda r: r.update(grade="good"), "record 4: field 'grade'"),
        (lambda r: r.update(K="3"), "record 4: field 'K': expected int"),
        (lambda r: r.update(inK=[2] * r["K"]), "record 4: field 'inK': items must be 0 or 1"),
        (lambda r: r.pop("id"), "record 4: field 'id': missing"),
        (lambda r: r.update(Np=0), "record 4: field 'Np'"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path, records, mutate, expected):
    mutate(records[4])
    path = _write(tmp_path / "bad.json", records)
    with pytest.raises(DataError) as err:
        load_graded_file(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_malformed_json_names_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"id": "M-1",\n "E": }]')
    with pytest.raises(DataError, match=r"broken.json: malformed JSON at line 2"):
        load_graded_file(path)


def test_unknown_dataset_is_a_clear_error():
    with pytest.raises(RagdiagError, match="unknown dataset 'marco'"):
        load_graded_dataset("marco")


def test_hub_loader_reads_a_local_repo_layout(tmp_path, records):
    """The real datasets.load_dataset path, on a local folder laid out like the hub repo."""
    _write(tmp_path / "samples_graded.json", records)
    table = load_graded_hub("msmarco", repo=str(tmp_path))
    assert len(table) == sum(1 for r in records if r["id"].startswith("M-"))
    assert table.subset_names == ["M"]
    everything = load_graded_dataset("all", repo=str(tmp_path))
    assert len(everything) == len(records)
