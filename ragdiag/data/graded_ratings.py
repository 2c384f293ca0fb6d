"""The judge's repeated grades of a graded table, as a (rows × ratings) matrix with NaN for missing.

``grade --repeats N`` writes ``grades`` (the N grades, null for a reply that gave none; ``grade`` is
their mean); ``grade --second-judge`` writes ``judges`` (each judge's list). From JSON records and
from Parquet (a ``list<double>`` column ``grades``, or the JSON text column earlier versions wrote):

- a row whose ``grades`` is present but not a list of grades 1–5 (or null) is an error naming the
  file, the record and the field, never a reason to drop the reliability of the whole file;
- a row with no ``grades`` (absent or null) among rows that have them is an all-NaN row (the
  correction then counts its grade as its one rating), a row with another number of repeats keeps
  them: the one-way ICC takes unequal counts (:mod:`ragdiag.metrics.judge_reliability`), and
  :func:`ratings_note` names both in the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import DataError


def grade_list(value: Any) -> list[float] | None:
    """A list of grades 1–5 (None for a missing one) as floats with NaN, or None if it is not one."""
    if not isinstance(value, list):
        return None
    out = []
    for g in value:
        if g is None:
            out.append(np.nan)
        elif type(g) in (int, float) and 1 <= g <= 5:
            out.append(float(g))
        else:
            return None
    return out


def check_grade_lists(records: list, source_label: str) -> None:
    """Every record's ``grades``, when present and not null, is a list of grades 1–5 or null."""
    check_grade_values([record.get("grades") if isinstance(record, dict) else None for record in records],
                       source_label)


def check_grade_values(values: list, source_label: str) -> None:
    """Each record's ``grades`` value (``values``, one per record, None where absent) is a list of grades
    1–5 or null; else the record (1-based) is named."""
    if values.count(None) == len(values):
        return
    for number, value in enumerate(values, start=1):
        if value is not None and grade_list(value) is None:
            raise DataError.at(source_label, number, "grades",
                               f"{str(value)[:60]!r} is not a list of grades 1–5 (null for a reply without one)")


def _padded(lists: list[list[float]]) -> np.ndarray:
    width = max(map(len, lists))
    return np.array([g + [np.nan] * (width - len(g)) for g in lists], dtype=np.float64).reshape(len(lists), width)


def rating_matrix(records: list, keep: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    """:func:`rating_matrix_of` the records' ``grades`` and ``judges`` fields."""
    dicts = [r if isinstance(r, dict) else {} for r in records]
    return rating_matrix_of([r.get("grades") for r in dicts], [r.get("judges") for r in dicts], keep)


def rating_matrix_of(grades: list, judges: list, keep: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    """The repeated grades of the kept records as a (rows, R) matrix with NaN padding, and where they
    come from: ``grades`` lists of ``grade --repeats N`` (some row with N ≥ 2: "repeats"; a row
    without ``grades`` is all NaN), else the per-judge lists of ``grade --second-judge`` (each judge's
    mean: "judges"); (None, None) when there is neither. ``grades`` (one value per record, None where
    absent) must have passed :func:`check_grade_values`; ``judges`` likewise one value per record."""
    if not np.any(keep):
        return None, None
    if grades.count(None) < len(grades):
        lists = [grade_list(g) or [] for g in itertools.compress(grades, keep.tolist())]
        if max(map(len, lists)) >= 2:
            return _padded(lists), "repeats"
    if judges.count(None) == len(judges):
        return None, None
    kept_judges: list[Any] = list(itertools.compress(judges, keep.tolist()))  # JSON values, checked below
    if all(isinstance(j, dict) and len(j) >= 2 for j in kept_judges):
        rows = []
        for per_judge in kept_judges:
            means = []
            for values in per_judge.values():
                parsed = grade_list(values)
                if parsed is None:
                    return None, None
                means.append(float(np.nanmean(parsed)) if not np.all(np.isnan(parsed)) else np.nan)
            rows.append(means)
        return _padded(rows), "judges"
    return None, None


def ratings_from_list_column(array, path: str, offset: int, width: int | None = None) -> np.ndarray:
    """The (rows, width) matrix of one batch of a Parquet ``list<number>`` column ``grades`` (NaN for
    a null list, a null item and padding); an item outside 1–5 names its row (1-based, from ``offset``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = np.asarray(pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    width = int(lengths.max(initial=0)) if width is None else width
    out = np.full((len(lengths), width), np.nan)
    values = pc.list_flatten(array.cast(pa.list_(pa.float64())))
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    if values.null_count:
        flat[np.asarray(values.is_null().to_numpy(zero_copy_only=False))] = np.nan
    present = ~np.isnan(flat)
    bad = np.zeros(len(flat), dtype=bool)
    bad[present] = (flat[present] < 1) | (flat[present] > 5)
    if bad.any():
        row = int(np.searchsorted(np.cumsum(lengths), int(np.argmax(bad)), side="right")) + 1
        raise DataError.at(path, offset + row, "grades", f"{flat[int(np.argmax(bad))]!r} is not a grade 1–5")
    out[np.arange(width)[None, :] < lengths[:, None]] = flat
    return out


def ratings_note(ratings: np.ndarray, name_of: Callable[[int], str] | None = None) -> str | None:
    """One sentence when rows hold different numbers of ratings (None when every row has the same):
    how many rows have how many, rows without any counted as holding their grade, and the first
    unusual row (``name_of``: a row's label from its index)."""
    count = (~np.isnan(ratings)).sum(axis=1)
    if len(count) == 0 or np.all(count == count[0]):
        return None
    values, tally = np.unique(count, return_counts=True)
    usual = int(values[np.argmax(tally)])
    parts = [f"{n} row{'s' if n != 1 else ''} with {'no repeats (its grade counts as its one rating)' if v == 0 else v}"
             for v, n in sorted(zip(values.tolist(), tally.tolist()), key=lambda p: (p[0] != usual, p[0]))]
    first = int(np.argmax(count != usual))
    where = f"; first: {name_of(first)}" if name_of else ""
    return (f"ratings per row differ: {', '.join(parts)}{where}; ICC uses the one-way formula for unequal counts "
            "(k₀)")


def parquet_ratings(schema, batches: Callable[[str], Iterable], path: Path, keep: np.ndarray
                    ) -> tuple[np.ndarray | None, str | None]:
    """The repeated grades of the kept rows of a Parquet graded file (as :func:`rating_matrix` gives
    them from JSON): the ``grades`` list column read columnar, or the JSON text ``grades`` / ``judges``
    columns row by row. ``batches(name)`` yields the record batches of one column."""
    import orjson
    import pyarrow.types as pt

    texts = []
    for name in (n for n in ("grades", "judges") if schema.get_field_index(n) >= 0):
        typ = schema.field(name).type
        if name == "grades" and (pt.is_list(typ) or pt.is_large_list(typ)) and (pt.is_integer(typ.value_type)
                                                                              or pt.is_floating(typ.value_type)):
            parts, offset = [], 0
            for batch in batches("grades"):
                parts.append(ratings_from_list_column(batch.column(0), str(path), offset))
                offset += batch.num_rows
            width = max((p.shape[1] for p in parts), default=0)
            if width >= 2:
                return np.concatenate([np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=np.nan)
                                       for p in parts])[keep], "repeats"
        elif pt.is_string(typ) or pt.is_large_string(typ):
            texts.append(name)
        else:
            raise DataError(f"{path}: column '{name}' has type {typ}, expected a list of grades (or its JSON text)")
    if not texts:
        return None, None
    records: list[dict[str, Any]] = [{} for _ in range(len(keep))]
    for name in texts:
        row = 0
        for batch in batches(name):
            for text in batch.column(0).to_pylist():
                row += 1
                try:
                    if text is not None:
                        records[row - 1][name] = orjson.loads(text)
                except orjson.JSONDecodeError:
                    raise DataError.at(str(path), row, name, f"not JSON: {text[:40]!r}") from None
    check_grade_lists(records, str(path))
    return rating_matrix(records, keep)
