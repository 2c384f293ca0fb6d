"""Graded-sample loading: validation messages name file, record and field; hub loader on a local copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.data.loaders import load_graded_dataset, load_graded_file, load_graded_hub
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.jsonl import read_json_records
from tools.synthetic import synthetic_graded


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
    for row, r in enumerate(records):  # the padded inK matrix holds each record's list, then zeros
        assert table.in_k[row].tolist() == r["inK"] + [0] * (table.in_k.shape[1] - r["K"])
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
    [  # records[4] is the fifth record: numbers are 1-based, as editors count
        (lambda r: r.pop("inK"), "record 5: field 'inK': missing"),
        (lambda r: r.update(inK=r["inK"][:-1]), "record 5: field 'inK': has"),
        (lambda r: r.update(grade=7), "record 5: field 'grade': 7 is not a finite grade between 1 and 5"),
        (lambda r: r.update(grade=0.5), "record 5: field 'grade': 0.5 is not"),
        (lambda r: r.update(grade="good"), "record 5: field 'grade'"),
        (lambda r: r.update(grade=True), "record 5: field 'grade'"),
        (lambda r: r.update(K="3"), "record 5: field 'K': expected int"),
        (lambda r: r.update(K=True), "record 5: field 'K': expected int"),
        (lambda r: r.update(inK=[2] * r["K"]), "record 5: field 'inK': items must be 0 or 1"),
        (lambda r: r.update(inK=[True] * r["K"]), "record 5: field 'inK': items must be 0 or 1"),
        (lambda r: r.update(inK=[1] * r["K"], Np=r["K"] - 1), "record 5: field 'inK': "),
        (lambda r: r.pop("id"), "record 5: field 'id': missing"),
        (lambda r: r.update(Np=0), "record 5: field 'Np'"),
        (lambda r: r.update(Np=-4), "record 5: field 'Np': -4 is not a positive count"),
        (lambda r: r.update(Np=r["Nc"] + 1), "record 5: field 'Np': 31 positives exceed Nc = 30"),
        (lambda r: r.update(Nc=-1), "record 5: field 'Nc': -1 is not a positive candidate count"),
        (lambda r: r.update(Nc=r["K"] - 1, Np=1), "record 5: field 'K': cut-off 6 exceeds Nc = 5"),
        (lambda r: r.update(K=0, inK=[]), "record 5: field 'K': 0 is not a positive cut-off"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path, records, mutate, expected):
    mutate(records[4])
    path = _write(tmp_path / "bad.json", records)
    with pytest.raises(DataError) as err:
        load_graded_file(path)
    assert str(path) in str(err.value) and expected in str(err.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_grade_is_rejected_not_taken_as_missing(records, value):
    records[2]["grade"] = value  # possible from the hub's Arrow columns, never from a JSON file (orjson refuses)
    with pytest.raises(DataError, match=rf"<mem>: record 3: field 'grade': {value!r} is not a finite grade"):
        build_graded_table(records, "<mem>", GradedSource("<mem>"))


def test_duplicate_sample_keys_name_both_records(tmp_path, records):
    records.append(dict(records[6], grade=1 if records[6]["grade"] != 1 else 2))
    path = _write(tmp_path / "dup.json", records)
    with pytest.raises(DataError) as err:
        load_graded_file(path)
    r = records[6]
    assert str(err.value) == (f"{path}: records 7 and {len(records)} are the same sample (id '{r['id']}', "
                              f"E '{r['E']}', Nc {r['Nc']}, Np {r['Np']}, K {r['K']}); remove one")


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


def test_the_bundled_sample_given_by_path_is_still_flagged_simulated(tmp_path):
    import shutil

    from ragdiag.data.loaders import bundled_sample_path, load_graded_file

    copy = tmp_path / "mine.json"
    shutil.copy(bundled_sample_path(), copy)
    assert load_graded_file(copy).source.simulated_grades is True


def test_a_path_that_is_not_a_regular_file_is_named_as_such(tmp_path):
    import pytest

    from ragdiag.data.loaders import load_graded_file
    from ragdiag.errors import DataError

    with pytest.raises(DataError, match="not a regular file"):
        load_graded_file(tmp_path)
    with pytest.raises(DataError, match="file not found"):
        load_graded_file(tmp_path / "absent.json")


def test_invalid_utf8_in_a_graded_or_answers_file_names_line_and_byte(tmp_path):
    """Issue 18: correlate --graded and grade --answers read through the same loaders."""
    from typer.testing import CliRunner

    from ragdiag.cli import app

    graded = tmp_path / "graded.jsonl"
    data = b'{"id": "M-1"}\n{"id": "M-\xe9"}\n'
    graded.write_bytes(data)
    result = CliRunner().invoke(app, ["correlate", "--graded", str(graded)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert f"{graded}: line 2: not UTF-8 text (byte offset 24: invalid continuation byte)" in result.stderr
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(data)
    result = CliRunner().invoke(app, ["grade", "--answers", str(answers), "--out", str(tmp_path / "g.json"), "--cache",
                                      "replay", "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 2 and f"{answers}: line 2: not UTF-8 text (byte offset 24" in result.stderr
    assert graded.read_bytes() == answers.read_bytes() == data and not (tmp_path / "g.json").exists()
