"""Graded records decoded straight into typed rows (msgspec), without a dict per record.

A JSON list (or JSON lines) of graded samples is decoded into :class:`GradedRow` structs holding only
the fields the graded table reads; every other field (ranks, answer texts other than the ideal one,
P, R, ...) is skipped without building a Python object. The decoder also checks the types
(``id``/``E`` strings, ``Nc``/``Np``/``K`` integers and not booleans, ``grade`` a number or null).
``inK`` is kept as its raw JSON text (``[0, 1, 0]``) and read for all rows at once by
:func:`in_k_digits`; :func:`ragdiag.data.graded_columns.row_columns` turns the rows into columns.
Anything refused gives None: the caller then parses the file with orjson and validates record by
record, so that the error names the record and the field.
"""

from __future__ import annotations

import mmap
import re
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np


class GradedRow(msgspec.Struct, gc=False, kw_only=True):
    """The fields of one graded record that :func:`ragdiag.data.graded_table.build_graded_table` reads, in
    the order ``grade`` writes them (the decoder looks for the next key where the last one was found)."""

    id: str
    E: str
    Nc: int
    Np: int
    K: int
    inK: msgspec.Raw  # the JSON text of the list, read by in_k_digits
    answer_ideal: msgspec.Raw = None  # type: ignore[assignment]  # the JSON text, read when needed (msgspec takes no Raw | None)
    grade: float | None
    grades: Any = None
    judges: Any = None
    grade_probs: Any = None
    ideal_degenerate: Any = None
    simulated_grades: Any = None


JSON_LIST_START = re.compile(rb"\s*\[")  # a JSON list, else JSON lines
ROWS_DECODER = msgspec.json.Decoder(list[GradedRow])
ROW_DECODER = msgspec.json.Decoder(GradedRow)


def decode_graded_rows(data: bytes | mmap.mmap) -> list[GradedRow] | None:
    """The rows of a JSON list (or JSON-lines) graded file's bytes; None when they are not well-formed
    graded records (the caller then reads them as plain JSON to name what is wrong)."""
    try:
        if JSON_LIST_START.match(data):
            return ROWS_DECODER.decode(data)
        return ROW_DECODER.decode_lines(data) or None
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


_SPACES = b" \t\n\r"  # JSON whitespace
_LIST_BYTES = b"[]01," + _SPACES  # the bytes of a flat JSON list of 0/1
_CLOSE = ord("]")


def in_k_digits(rows: list[GradedRow]) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``inK`` lists of all rows, read from their JSON texts at once: (the values of every list one
    after the other, uint8; the length of each list, int64). None unless every ``inK`` is one flat list
    of the single digits 0 and 1 (anything else — another number, a nested list, not a list — is left
    to the per-record checks, which name the record).

    The texts are valid JSON values (the decoder checked them) and are read with ``bytes.translate``
    (C loops, no per-row Python). Each is one flat list exactly when its brackets read ``[]`` (a bare
    number has none, a nested list ``[[``): all of them together ``[]`` once per row. Its values are
    0 and 1 exactly when no byte other than a bracket, a comma, whitespace or the digits 0 and 1
    occurs and each value is one digit: a list of v values has v − 1 commas (none when empty), so
    the digits number the commas plus the non-empty lists exactly when no value has two (``10``)."""
    text = b"".join(map(attrgetter("inK"), rows))
    if text.translate(None, _LIST_BYTES) or text.translate(None, b"01," + _SPACES) != b"[]" * len(rows):
        return None
    ends = text.translate(None, b"[," + _SPACES)  # each list's digits, then its "]"
    closes = np.flatnonzero(np.frombuffer(ends, dtype=np.uint8) == _CLOSE)
    lengths = np.diff(closes, prepend=-1) - 1
    digits = np.frombuffer(ends.translate(None, b"]"), dtype=np.uint8)
    if len(digits) != text.count(b",") + np.count_nonzero(lengths):
        return None
    return digits - ord("0"), lengths.astype(np.int64)
