"""Graded files decoded into typed rows (msgspec) give the very table the per-record path builds from
dicts, and anything the decoder refuses falls back to the per-record path, whose errors name the record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from ragdiag.data.graded_rows import decode_graded_rows
from ragdiag.data.graded_table import GradedSource, GradedTable, build_graded_table
from ragdiag.data.loaders import load_graded_file
from ragdiag.data.reference_gate import make_gate
from ragdiag.errors import DataError
from tools.synthetic import synthetic_graded


def _records() -> list[dict]:
    records = synthetic_graded(n_queries=6, seed=3, answers=True)
    rng = np.random.default_rng(7)
    for number, r in enumerate(records):
        if number % 7 == 0:
            r["grade"] = None  # skipped rows, kept in with_missing
        if number % 5 == 0:
            r["grades"] = [int(g) for g in rng.integers(1, 6, size=3)]
        if number % 11 == 0:
            r["grade_probs"] = [0.1, 0.2, 0.3, 0.2, 0.2]
        if number % 13 == 0:
            r["ideal_degenerate"] = "refusal"
    records[1]["answer_ideal"] = "I cannot answer this question."  # a degenerate ideal answer for the gate
    return records


def _assert_same(a: GradedTable, b: GradedTable) -> None:
    for f in dataclasses.fields(GradedTable):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "source":
            continue
        if f.name == "with_missing" and x is not None:
            _assert_same(x, y)
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("lines", [False, True])
def test_rows_give_the_table_of_the_records(tmp_path: Path, lines: bool) -> None:
    records = _records()
    path = tmp_path / ("g.jsonl" if lines else "g.json")
    path.write_text("\n\n".join(json.dumps(r) for r in records) if lines else json.dumps(records))
    assert decode_graded_rows(path.read_bytes()) is not None  # the typed path is the one taken
    gate = make_gate()
    from_rows = load_graded_file(path, gate=gate)
    from_dicts = build_graded_table(records, str(path), GradedSource(str(path)), gate)
    _assert_same(from_rows, from_dicts)
    assert from_rows.ratings_source == "repeats" and from_rows.grade_probs is not None
    assert from_rows.with_missing is not None and from_rows.degenerate is not None and from_rows.degenerate.any()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("K", True, "record 4"),  # a boolean is not an integer, for the decoder as for the records
    ("Nc", 3.0, "record 4"),
    ("grade", "3", "record 4"),
    ("inK", [0, 2], "record 4"),  # typed, but out of range: the table's checks refuse it
    ("grades", [9], "record 4"),
])
def test_refused_rows_fall_back_and_name_the_record(tmp_path: Path, field: str, value, message: str) -> None:
    records = _records()
    records[3][field] = value
    if field == "inK":
        records[3]["K"] = records[3]["Np"] = 2
        records[3]["Nc"] = max(records[3]["Nc"], 2)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=message) as from_file:
        load_graded_file(path)
    with pytest.raises(DataError) as from_dicts:
        build_graded_table(records, str(path), GradedSource(str(path)))
    assert str(from_file.value) == str(from_dicts.value)


def test_missing_field_and_duplicates_are_named(tmp_path: Path) -> None:
    records = _records()
    del records[2]["E"]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(records))
    assert decode_graded_rows(path.read_bytes()) is None
    with pytest.raises(DataError, match="record 3"):
        load_graded_file(path)
    records = _records()
    records.append(dict(records[4]))
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=f"records 5 and {len(records)} are the same sample"):
        load_graded_file(path)


def _rows_with_in_k(texts: list[bytes]) -> list:
    import msgspec

    from ragdiag.data.graded_rows import GradedRow

    records = [{"id": "q", "E": "e", "Nc": 9, "Np": 1, "K": 1, "inK": msgspec.Raw(text), "grade": 3} for text in texts]
    return msgspec.json.Decoder(list[GradedRow]).decode(msgspec.json.encode(records))


def test_in_k_read_from_its_json_text() -> None:
    from ragdiag.data.graded_rows import in_k_digits

    flat, lengths = in_k_digits(_rows_with_in_k([b"[0, 1]", b"[1]", b"[ ]", b"[\n 1 ,0,\t0 ]", b"[]",
                                                 b"[" + b",".join([b"1"] * 300) + b"]"]))
    assert flat.tolist() == [0, 1, 1, 1, 0, 0] + [1] * 300 and lengths.tolist() == [2, 1, 0, 3, 0, 300]
    assert lengths.dtype == np.int64 and flat.dtype == np.uint8


@pytest.mark.parametrize("text", [b"[10]", b"[0, 1, 11]", b"[1 , 100]", b"[2]", b"[0, -0]", b"[1e0]", b"[1.0]",
                                  b"[true]", b"[[0], 1]", b"1", b"null"])
def test_in_k_other_than_a_flat_list_of_0_and_1_is_left_to_the_record_checks(text: bytes) -> None:
    from ragdiag.data.graded_rows import in_k_digits

    assert in_k_digits(_rows_with_in_k([b"[0, 1]", text])) is None
