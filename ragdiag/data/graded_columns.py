"""Decoded graded rows as columns: what :func:`ragdiag.data.graded_table.graded_table_from_columns` needs
from the :class:`ragdiag.data.graded_rows.GradedRow` structs, without the structs.

They hold no :class:`msgspec.Raw` (which points into the decoder's buffer).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from ragdiag.data.graded_rows import GradedRow, decode_graded_rows, in_k_digits

OPTIONAL_FIELDS = ("grades", "judges", "grade_probs", "ideal_degenerate")  # read by the table when present
_ABSENT: tuple[Any, ...] = (None,) * len(OPTIONAL_FIELDS)

Labels = tuple[np.ndarray, list[str]]  # codes (int32) into the sorted distinct strings, and those strings


def string_codes(values: Sequence[str]) -> Labels:
    """Codes into the sorted distinct values (``np.unique(values, return_inverse=True)`` for strings)."""
    names = sorted(set(values))
    index = {name: code for code, name in enumerate(names)}
    return np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values)), names


class ReadAnswers(Sequence[Any]):
    """The ideal answers of ``length`` rows where only some were decoded (``values``: row → answer);
    None elsewhere. :func:`ragdiag.data.graded_table.ideal_kinds_of` reads each id's first row and,
    to know whether the file has texts, the rows up to the first non-blank one: those are decoded."""

    def __init__(self, values: dict[int, Any], length: int) -> None:
        self.values, self.length = values, length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]
        if not 0 <= index < self.length:
            raise IndexError(index)
        return self.values.get(index)

    def __iter__(self) -> Iterator[Any]:
        return map(self.values.get, range(self.length))


@dataclass
class RowColumns:
    """The fields of decoded rows, one column each (row order kept)."""

    rows: int
    ids: Labels
    embedders: Labels
    ints: dict[str, np.ndarray] | None  # Nc, Np, K as int64; None when a value does not fit in int64
    grade: np.ndarray  # float64, NaN where the grade is null
    nulls: int  # the null grades (a NaN that is not one is refused by the table's checks)
    in_k: tuple[np.ndarray, np.ndarray] | None  # in_k_digits: the values and each list's length
    optional: dict[str, list | None]  # OPTIONAL_FIELDS, one value per row; None when no row has the field
    answers: dict[int, Any]  # the decoded ideal answers that ReadAnswers gives
    simulated: bool  # every row says ``simulated_grades: true`` (and there is a row)


def _int_column(rows: list[GradedRow], name: str) -> np.ndarray | None:
    """The integer field ``name`` of the typed rows as int64; None when a value does not fit."""
    try:
        return np.fromiter(map(attrgetter(name), rows), dtype=np.int64, count=len(rows))
    except OverflowError:
        return None


def _decoded(raw: msgspec.Raw | None) -> Any:
    return None if raw is None else msgspec.json.decode(raw)


def _read_answers(raws: list[msgspec.Raw | None], id_codes: np.ndarray) -> dict[int, Any]:
    """The decoded ideal answers of each id's first row and of the first row with a non-blank text
    (the rows before it have none: None for :class:`ReadAnswers` as for the gate)."""
    values: dict[int, Any] = {}
    for row, raw in enumerate(raws):
        answer = _decoded(raw)
        if isinstance(answer, str) and answer.strip():
            values[row] = answer
            break
    for row in np.unique(id_codes, return_index=True)[1].tolist():
        if row not in values:
            values[row] = _decoded(raws[row])
    return values


def row_columns(rows: list[GradedRow]) -> RowColumns:
    """The columns of ``rows`` (:func:`ragdiag.data.graded_rows.decode_graded_rows`)."""
    columns = {name: _int_column(rows, name) for name in ("Nc", "Np", "K")}
    ints = {name: column for name, column in columns.items() if column is not None}
    grades = list(map(attrgetter("grade"), rows))
    ids = string_codes(list(map(attrgetter("id"), rows)))
    optional: dict[str, list | None] = dict.fromkeys(OPTIONAL_FIELDS)
    if list(map(attrgetter(*OPTIONAL_FIELDS), rows)).count(_ABSENT) < len(rows):  # one pass when none has them
        values = {name: list(map(attrgetter(name), rows)) for name in OPTIONAL_FIELDS}
        optional = {name: None if column.count(None) == len(column) else column for name, column in values.items()}
    return RowColumns(
        rows=len(rows), ids=ids, embedders=string_codes(list(map(attrgetter("E"), rows))),
        ints=ints if len(ints) == len(columns) else None,
        grade=np.array(grades, dtype=np.float64), nulls=grades.count(None), in_k=in_k_digits(rows),
        optional=optional, answers=_read_answers(list(map(attrgetter("answer_ideal"), rows)), ids[0]),
        simulated=bool(rows) and all(row.simulated_grades is True for row in rows),
    )


def graded_columns(data: bytes | mmap.mmap) -> RowColumns | None:
    """The columns of a JSON list (or JSON-lines) graded file's bytes; None when they are not well-formed
    graded records (:func:`ragdiag.data.graded_rows.decode_graded_rows`)."""
    rows = decode_graded_rows(data)
    return None if rows is None else row_columns(rows)
