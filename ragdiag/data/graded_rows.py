"""Graded records decoded straight into typed rows (msgspec), without a dict per record.

A JSON list (or JSON lines) of graded samples is decoded into :class:`GradedRow` structs holding only
the fields the graded table reads; every other field (ranks, answer texts other than the ideal one,
P, R, ...) is skipped without building a Python object. The decoder also checks the types
(``id``/``E`` strings, ``Nc``/``Np``/``K`` integers and not booleans, ``grade`` a number or null).
``inK`` is kept as its raw JSON text (``[0, 1, 0]``) and read for all rows at once by
:func:`in_k_digits`. Anything refused gives None: the caller then parses the file with orjson and
validates record by record, so that the error names the record and the field.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np


class GradedRow(msgspec.Struct, gc=False):
    """The fields of one graded record that :func:`ragdiag.data.graded_table.build_graded_table` reads."""

    id: str
    E: str
    Nc: int
    Np: int
    K: int
    inK: msgspec.Raw  # the JSON text of the list, read by in_k_digits
    grade: float | None
    grades: Any = None
    judges: Any = None
    grade_probs: Any = None
    answer_ideal: msgspec.Raw = None  # type: ignore[assignment]  # the JSON text, read when needed (msgspec takes no Raw | None)
    ideal_degenerate: Any = None
    simulated_grades: Any = None


class DecodedOnRead(Sequence[Any]):
    """Raw JSON values (None where absent) decoded when read: the ideal answers, of which the reference
    gate reads the first one of each query (and the first non-blank one, to know that there are texts)."""

    def __init__(self, raws: list[msgspec.Raw | None]) -> None:
        self.raws = raws

    def __len__(self) -> int:
        return len(self.raws)

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]
        raw = self.raws[index]
        return None if raw is None else msgspec.json.decode(raw)


_JSON_LIST = re.compile(rb"\s*\[")
_LIST = msgspec.json.Decoder(list[GradedRow])
_LINE = msgspec.json.Decoder(GradedRow)


def decode_graded_rows(data: bytes | mmap.mmap) -> list[GradedRow] | None:
    """The rows of a JSON list (or JSON-lines) graded file's bytes; None when they are not well-formed
    graded records (the caller then reads them as plain JSON to name what is wrong)."""
    try:
        if _JSON_LIST.match(data):
            return _LIST.decode(data)
        return _LINE.decode_lines(data) or None
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


_ALLOWED = np.zeros(256, dtype=bool)  # the bytes of a flat JSON list of 0/1: brackets, digits, comma, whitespace
_ALLOWED[list(b"[]01, \t\n\r")] = True
_OPEN, _CLOSE, _ZERO = ord("["), ord("]"), ord("0")


def in_k_digits(rows: list[GradedRow]) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``inK`` lists of all rows, read from their JSON texts at once: (the values of every list one
    after the other, uint8; the length of each list, int64). None unless every ``inK`` is one flat list
    of the single digits 0 and 1 (anything else — another number, a nested list, not a list — is left
    to the per-record checks, which name the record).

    The texts are valid JSON (the decoder checked them), so they are flat lists exactly when the
    brackets alternate ``[ ] [ ] …`` with one pair per row, and hold only 0 and 1 exactly when no
    other byte than a bracket, a comma, whitespace or the digits 0 and 1 occurs and no digit follows
    another (``10``, ``11``)."""
    text = np.frombuffer(b"".join(map(attrgetter("inK"), rows)), dtype=np.uint8)
    if not _ALLOWED[text].all():
        return None
    opens, closes = np.flatnonzero(text == _OPEN), np.flatnonzero(text == _CLOSE)
    if len(opens) != len(rows) or len(closes) != len(rows) or not len(rows):
        return None if len(rows) else (np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64))
    if np.any(closes < opens) or np.any(opens[1:] < closes[:-1]):
        return None
    digit = (text & 0xFE) == _ZERO  # the bytes "0" and "1"
    if np.any(digit[1:] & digit[:-1]):
        return None
    digits_up_to = np.cumsum(digit, dtype=np.int64 if len(text) >= 2**31 else np.int32)
    return text[digit] - _ZERO, np.subtract(digits_up_to[closes], digits_up_to[opens], dtype=np.int64)

