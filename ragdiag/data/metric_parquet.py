"""``correlate --table`` on a Parquet file, columnar: pyarrow reads only the named columns into numpy.

Same result as the row-by-row reader of :mod:`ragdiag.data.metric_table` (rows with a null or NaN
grade or metric skipped and counted), without a Python object per row for the numeric columns.
A column that is missing, or not numeric (grade and metric columns), is one error line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.extras import install_hint


def _numbers(table, name: str, source: str) -> np.ndarray:
    """A numeric (or boolean) column as float64, NaN where null."""
    import pyarrow as pa
    import pyarrow.types as pt

    column = table.column(name)
    if not (pt.is_integer(column.type) or pt.is_floating(column.type) or pt.is_boolean(column.type)
            or pt.is_decimal(column.type)):
        raise DataError.at(source, None, name, f"has type {column.type}, expected numbers")
    values = column.cast(pa.float64()).to_numpy()
    return np.asarray(values, dtype=np.float64)


def read_metric_parquet(path: Path, grade_col: str, measure_cols: list[str], group_col: str | None,
                        id_col: str | None) -> dict[str, Any]:
    """The fields of a :class:`~ragdiag.data.metric_table.MetricTable` (grade, measures, group, ids,
    skipped) read from a Parquet file."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RagdiagError(f"{path}: reading Parquet needs pyarrow: {install_hint('pyarrow')} "
                           "(or export the table as CSV/JSONL)") from None
    from ragdiag.io.parquet_input import check_parquet_magic, check_unique_columns

    source = str(path)
    wanted = list(dict.fromkeys([grade_col, *measure_cols, *(c for c in (group_col, id_col) if c)]))
    check_parquet_magic(path)
    try:
        names = pq.read_schema(path).names
        check_unique_columns(path, names)
        missing = [c for c in wanted if c not in names]
        if missing:
            raise DataError.at(source, None, missing[0], f"no such column; columns present: {', '.join(names)[:300]}")
        table = pq.read_table(path, columns=wanted)
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{source}: corrupt or truncated Parquet file ({str(err).splitlines()[0][:160]})") from None
    grade = _numbers(table, grade_col, source)
    values = {c: _numbers(table, c, source) for c in measure_cols}
    keep = ~np.isnan(grade)
    for column in values.values():
        keep &= ~np.isnan(column)
    if not keep.any():
        raise RagdiagError(f"{source}: no row has a grade and every metric ({', '.join(wanted[:1 + len(measure_cols)])})")

    def text(name: str) -> np.ndarray:
        column = table.column(name).cast(pa.string())
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)[keep].astype(str).astype(object)

    group = text(group_col) if group_col else np.full(int(keep.sum()), "all", dtype=object)
    return {"grade": grade[keep], "measures": {c: v[keep] for c, v in values.items()}, "group": group,
            "ids": text(id_col) if id_col else None, "skipped": int((~keep).sum())}
