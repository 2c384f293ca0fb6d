"""Human grades for graded items (``ragdiag calibrate --human``): JSON lines or CSV.

Each row names a graded item by ``id``, ``E`` and ``K`` (plus ``Nc`` and ``Np`` when the graded file has
several rows with the same id, E and K) and gives ``grade``, an integer 1–5. An empty or null grade
means "not labelled yet" (the ``--suggest`` sheet comes back with some left empty); other columns are
ignored. Errors name the file, the line and the field.

A CSV is read as every ragdiag CSV (:func:`ragdiag.io.text_input.csv_rows`): a header that repeats a
column (two ``grade`` columns) is refused, a cell may hold a long answer. The ``--suggest`` sheet is
meant for a spreadsheet, so a text cell that a spreadsheet would run as a formula (starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written with a leading ``'``, as OWASP's
"CSV Injection" page recommends; a cell starting with ``'`` gets one too, so reading strips exactly
one and every value reads back unchanged (:func:`sheet_cell`, :func:`read_sheet_cell`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from ragdiag.errors import DataError
from ragdiag.io.jsonl import read_jsonl_lines
from ragdiag.io.text_input import csv_rows

ItemKey = tuple[str, str, int, int, int]  # id, E, Nc, Np, K: the samples_graded key
# what a --suggest --strategy sheet adds to each row: how the row was drawn (read as text, checked by calibrate)
DESIGN_COLUMNS = ("strategy", "strata", "stratum", "sampling_probability", "seed")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP, CSV Injection


def sheet_cell(value: str) -> str:
    """A text cell for a sheet opened in a spreadsheet: ``'`` before a formula start (or a ``'``)."""
    return "'" + value if value.startswith((*FORMULA_STARTS, "'")) else value


def read_sheet_cell(value: Any) -> Any:
    """The value :func:`sheet_cell` was given: one leading ``'`` dropped before a formula start or ``'``."""
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith((*FORMULA_STARTS, "'")):
        return value[1:]
    return value


@dataclass(frozen=True)
class HumanGrade:
    line: int
    id: str
    E: str
    K: int
    Nc: int | None
    Np: int | None
    grade: int | None
    design: tuple[tuple[str, str], ...] = ()  # the DESIGN_COLUMNS the row holds (non-empty), as text


@overload
def _int_field(value: Any, path: Path, line: int, name: str, required: Literal[True]) -> int: ...


@overload
def _int_field(value: Any, path: Path, line: int, name: str, required: Literal[False]) -> int | None: ...


def _int_field(value: Any, path: Path, line: int, name: str, required: bool) -> int | None:
    if value is None or value == "":
        if required:
            raise DataError(f"{path}: line {line}: field '{name}': missing")
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise DataError(f"{path}: line {line}: field '{name}': expected an integer, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataError(f"{path}: line {line}: field '{name}': expected an integer, got {value!r}")
    return value


def _grade(value: Any, path: Path, line: int) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise DataError(f"{path}: line {line}: field 'grade': expected an integer 1–5, got {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{path}: line {line}: field 'grade': expected an integer 1–5, got {value!r}")
    else:
        number = float(value)
    if not number.is_integer() or not 1 <= number <= 5:
        raise DataError(f"{path}: line {line}: field 'grade': {value!r} is outside the integer grades 1–5")
    return int(number)


def _row(record: Any, path: Path, line: int) -> HumanGrade:
    if not isinstance(record, dict):
        raise DataError(f"{path}: line {line}: expected an object with id, E, K and grade")
    for name in ("id", "E"):
        if not isinstance(record.get(name), str) or not record[name]:
            raise DataError(f"{path}: line {line}: field '{name}': missing or not a non-empty string")
    k = _int_field(record.get("K"), path, line, "K", True)
    nc = _int_field(record.get("Nc"), path, line, "Nc", False)
    np_ = _int_field(record.get("Np"), path, line, "Np", False)
    if "grade" not in record:
        raise DataError(f"{path}: line {line}: field 'grade': missing (leave it empty for an unlabelled item)")
    design = tuple((name, str(record[name]).strip()) for name in DESIGN_COLUMNS
                   if record.get(name) is not None and str(record[name]).strip())
    return HumanGrade(line, record["id"], record["E"], k, nc, np_, _grade(record["grade"], path, line), design)


def read_human_grades(path: Path) -> list[HumanGrade]:
    """The rows of a human-grade file (.csv by suffix, else JSON lines), validated."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        try:
            rows = [(number, {key: read_sheet_cell(value) for key, value in row.items()})
                    for number, row in csv_rows(path)]
        except FileNotFoundError:
            raise DataError(f"{path}: file not found") from None
        except OSError as err:
            raise DataError(f"{path}: cannot read as CSV: {err}") from None
    else:
        rows = read_jsonl_lines(path)
    return [_row(record, path, line) for line, record in rows]


def match_items(rows: list[HumanGrade], keys: list[ItemKey], path: Path) -> dict[ItemKey, int]:
    """Human grade per graded item key; an unknown, ambiguous or repeated item is an error naming the line."""
    return {key: row.grade for key, row in match_rows(rows, keys, path).items() if row.grade is not None}


def match_rows(rows: list[HumanGrade], keys: list[ItemKey], path: Path) -> dict[ItemKey, HumanGrade]:
    """Every row (labelled or not) per graded item key; errors as :func:`match_items`."""
    by_short: dict[tuple[str, str, int], list[ItemKey]] = {}
    for key in keys:
        by_short.setdefault((key[0], key[1], key[4]), []).append(key)
    out: dict[ItemKey, HumanGrade] = {}
    seen: dict[ItemKey, int] = {}
    for row in rows:
        candidates = [k for k in by_short.get((row.id, row.E, row.K), [])
                      if (row.Nc is None or k[2] == row.Nc) and (row.Np is None or k[3] == row.Np)]
        if not candidates:
            raise DataError(f"{path}: line {row.line}: item id '{row.id}', E '{row.E}', K {row.K} is not in the "
                            "graded file")
        if len(candidates) > 1:
            raise DataError(f"{path}: line {row.line}: item id '{row.id}', E '{row.E}', K {row.K} matches "
                            f"{len(candidates)} graded rows; add Nc and Np to say which")
        key = candidates[0]
        if key in seen:
            raise DataError(f"{path}: line {row.line}: the same item as line {seen[key]} (id '{row.id}')")
        seen[key] = row.line
        out[key] = row
    return out
