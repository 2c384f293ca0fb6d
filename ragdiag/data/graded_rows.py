"""Graded records decoded straight into typed rows (msgspec), without a dict per record.

A JSON list (or JSON lines) of graded samples is decoded into :class:`GradedRow` structs holding only
the fields the graded table reads; every other field (ranks, answer texts other than the ideal one,
P, R, ...) is skipped without building a Python object. The decoder also checks the types
(``id``/``E`` strings, ``Nc``/``Np``/``K`` integers and not booleans, ``inK`` a list of integers,
``grade`` a number or null). Anything it refuses gives None: the caller then parses the file with
orjson and validates record by record, so that the error names the record and the field.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec


class GradedRow(msgspec.Struct, gc=False):
    """The fields of one graded record that :func:`ragdiag.data.graded_table.build_graded_table` reads."""

    id: str
    E: str
    Nc: int
    Np: int
    K: int
    inK: list[int]
    grade: float | None
    grades: Any = None
    judges: Any = None
    grade_probs: Any = None
    answer_ideal: Any = None
    ideal_degenerate: Any = None
    simulated_grades: Any = None


_JSON_LIST = re.compile(rb"\s*\[")
_LIST = msgspec.json.Decoder(list[GradedRow])
_LINE = msgspec.json.Decoder(GradedRow)


def decode_graded_rows(data: bytes) -> list[GradedRow] | None:
    """The rows of a JSON list (or JSON-lines) graded file's bytes; None when they are not well-formed
    graded records (the caller then reads them as plain JSON to name what is wrong)."""
    try:
        if _JSON_LIST.match(data):
            return _LIST.decode(data)
        return _LINE.decode_lines(data) or None
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
