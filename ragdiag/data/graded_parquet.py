"""The graded table in Parquet: written from graded records, read columnar into a :class:`GradedTable`.

Columns (samples_graded schema): ``id``, ``E`` (string), ``Nc``, ``Np``, ``K`` (int64), ``rank``,
``inK`` (list<int64>), ``answer_ideal``, ``answer_topK`` (string), ``grade`` (float64, null when
the judge gave none), ``P``, ``R`` (float64). Any other key of the records (``grades``, ``judges``,
``judge_reply``, ``error`` …) is kept as a string column holding the value's JSON.

The reader never builds a Python object per row: pyarrow reads only the columns correlate needs
(``id``, ``E``, ``Nc``, ``Np``, ``K``, ``inK``, ``grade``), the checks of
:func:`ragdiag.data.schema.check_graded_record` run as vectorised numpy tests, and the result is
the same arrays :func:`ragdiag.data.graded_table.build_graded_table` makes from JSON (same codes,
same order), so both paths give identical correlations.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.data.graded_table import GradedSource, GradedTable
from ragdiag.data.schema import subset_of
from ragdiag.errors import DataError, RagdiagError

PARQUET_SUFFIX = ".parquet"
CORE_COLUMNS = ("id", "E", "Nc", "Np", "K", "rank", "inK", "answer_ideal", "answer_topK", "grade", "P", "R")
READ_COLUMNS = ("id", "E", "Nc", "Np", "K", "inK", "grade")


def is_parquet(path: str | Path) -> bool:
    """A graded table is Parquet when its name ends in ``.parquet``."""
    return Path(path).suffix.lower() == PARQUET_SUFFIX


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise RagdiagError("Parquet graded tables need pyarrow: pip install 'ragdiag[parquet]'") from None
    return pyarrow


def _schema(pa, extra: list[str]):
    ints, floats, text = pa.int64(), pa.float64(), pa.string()
    types = {"id": text, "E": text, "Nc": ints, "Np": ints, "K": ints, "rank": pa.list_(ints),
             "inK": pa.list_(ints), "answer_ideal": text, "answer_topK": text, "grade": floats, "P": floats,
             "R": floats}
    return pa.schema([(name, types[name]) for name in CORE_COLUMNS] + [(name, text) for name in extra])


def write_graded_parquet(path: Path, records: list[dict[str, Any]], inputs: Iterable[Path | None] = ()) -> Path:
    """Write graded records as one Parquet file (atomic, through :mod:`ragdiag.io.writer`)."""
    import orjson

    pa = _pyarrow()
    import pyarrow.parquet as pq

    from ragdiag.io.writer import atomic_path

    extra = sorted({key for record in records for key in record} - set(CORE_COLUMNS))
    columns: dict[str, list[Any]] = {name: [r.get(name) for r in records] for name in CORE_COLUMNS}
    for name in extra:
        columns[name] = [None if name not in r else orjson.dumps(r[name]).decode() for r in records]
    table = pa.Table.from_pydict(columns, schema=_schema(pa, extra))
    with atomic_path(path, inputs=inputs) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def parquet_columns(path: Path, names: tuple[str, ...]):
    """The named columns of a Parquet file as a pyarrow Table; one line when the file is missing, is
    not Parquet (or is truncated), or lacks a column."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a regular file")
    try:
        present = pq.read_schema(path).names
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({str(err).splitlines()[0][:160]})") from None
    missing = [name for name in names if name not in present]
    if missing:
        raise DataError(f"{path}: column '{missing[0]}' is missing (a graded table needs {', '.join(names)})")
    try:
        return pq.read_table(path, columns=list(names))
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({str(err).splitlines()[0][:160]})") from None


def _column(table, name: str, kinds: str, path: Path, what: str):
    """The column as one array; DataError when it is missing or of the wrong type."""
    import pyarrow.types as pt

    column = table.column(name)
    kind = column.type
    if pt.is_dictionary(kind):
        kind = kind.value_type
    ok = {"string": pt.is_string(kind) or pt.is_large_string(kind),
          "int": pt.is_integer(kind),
          "number": pt.is_integer(kind) or pt.is_floating(kind),
          "list": (pt.is_list(kind) or pt.is_large_list(kind) or pt.is_fixed_size_list(kind))
          and pt.is_integer(kind.value_type)}[kinds]
    if not ok:
        raise DataError(f"{path}: column '{name}' has type {column.type}, expected {what}")
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def _first(mask: np.ndarray) -> int:
    """1-based number of the first true row."""
    return int(np.argmax(mask)) + 1


def _no_nulls(array, name: str, path: Path) -> None:
    if array.null_count:
        nulls = np.asarray(array.is_null().to_numpy(zero_copy_only=False))
        raise DataError.at(str(path), _first(nulls), name, "missing (null)")


def _ints(table, name: str, path: Path) -> np.ndarray:
    array = _column(table, name, "int", path, "an integer")
    _no_nulls(array, name, path)
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.int64)


def _sorted_codes(array, name: str, path: Path) -> tuple[np.ndarray, list[str]]:
    """Integer codes into the sorted distinct strings (as ``np.unique`` numbers them on the JSON path)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    _no_nulls(array, name, path)
    encoded = array if pa.types.is_dictionary(array.type) else pc.dictionary_encode(array)
    names = [str(x) for x in encoded.dictionary.to_pylist()]
    order = np.argsort(np.asarray(names, dtype=object), kind="stable") if names else np.zeros(0, dtype=np.int64)
    rank = np.empty(len(names), dtype=np.int32)
    rank[order] = np.arange(len(names), dtype=np.int32)
    codes = rank[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
    sorted_names = [names[i] for i in order]
    if len(set(sorted_names)) != len(sorted_names):  # a dictionary may repeat a value; merge the copies
        unique, remap = np.unique(np.asarray(sorted_names, dtype=object), return_inverse=True)
        return remap.astype(np.int32)[codes], [str(x) for x in unique]
    return codes, sorted_names


def _check_values(nc, np_, k, lengths, flat, n, grade, path: Path) -> None:
    """The invariants of :func:`ragdiag.data.schema.check_graded_record`, one vectorised test each."""
    source = str(path)
    tests = [
        (nc < 1, "Nc", "is not a positive candidate count"),
        (np_ < 1, "Np", "is not a positive count"),
        (np_ > nc, "Np", "positives exceed Nc candidates"),
        (k < 1, "K", "is not a positive cut-off"),
        (k > nc, "K", "cut-off exceeds Nc candidates"),
        (lengths != k, "inK", "the number of items differs from K"),
    ]
    for bad, name, problem in tests:
        if bad.any():
            row = _first(bad)
            raise DataError.at(source, row, name, f"{problem} (Nc {nc[row - 1]}, Np {np_[row - 1]}, K {k[row - 1]}, "
                                                  f"{lengths[row - 1]} inK items)")
    if flat.size and (flat.min() < 0 or flat.max() > 1):
        item = int(np.argmax((flat < 0) | (flat > 1)))
        row = int(np.searchsorted(np.cumsum(lengths), item, side="right")) + 1
        raise DataError.at(source, row, "inK", "items must be 0 or 1")
    if (n > np_).any():
        row = _first(n > np_)
        raise DataError.at(source, row, "inK", f"{n[row - 1]} positives in the top K exceed Np = {np_[row - 1]}")
    present = ~np.isnan(grade)
    bad = np.zeros(len(grade), dtype=bool)
    bad[present] = ~((grade[present] >= 1) & (grade[present] <= 5))
    if bad.any():
        row = _first(bad)
        raise DataError.at(source, row, "grade", f"{float(grade[row - 1])!r} is not a finite grade between 1 and 5")


def _check_unique(query: np.ndarray, embedder: np.ndarray, nc, np_, k, names: list[str], embedders: list[str],
                  path: Path) -> None:
    """Refuse two rows with the same sample key (id, E, Nc, Np, K): sort the key columns, compare neighbours."""
    if len(k) < 2:
        return
    keys = (k, np_, nc, embedder, query)
    order = np.lexsort(keys)
    same = np.ones(len(k) - 1, dtype=bool)
    for column in keys:
        ordered = column[order]
        same &= ordered[1:] == ordered[:-1]
    if same.any():
        pos = int(np.argmax(same))
        a, b = sorted((int(order[pos]), int(order[pos + 1])))
        raise DataError(f"{path}: records {a + 1} and {b + 1} are the same sample (id '{names[query[a]]}', "
                        f"E '{embedders[embedder[a]]}', Nc {nc[a]}, Np {np_[a]}, K {k[a]}); remove one")


def _in_k_matrix(lengths: np.ndarray, flat: np.ndarray) -> np.ndarray:
    width = int(lengths.max()) if len(lengths) else 0
    in_k = np.zeros((len(lengths), width), dtype=np.uint8)
    in_k[np.arange(width)[None, :] < lengths[:, None]] = flat
    return in_k


def read_graded_parquet(path: Path, source: GradedSource) -> GradedTable:
    """The graded table of a Parquet file, columnar; rows with a null grade are skipped and counted.

    Errors (one line each): not a Parquet file, a missing column, a column of the wrong type, a null
    where a value is required, and every invariant of the samples_graded schema with its row number.
    """
    pa = _pyarrow()
    import pyarrow.compute as pc

    path = Path(path)
    table = parquet_columns(path, READ_COLUMNS)
    ids = _column(table, "id", "string", path, "a string")
    embedders = _column(table, "E", "string", path, "a string")
    nc, np_, k = (_ints(table, name, path) for name in ("Nc", "Np", "K"))
    in_k_column = _column(table, "inK", "list", path, "a list of integers")
    _no_nulls(in_k_column, "inK", path)
    lengths = np.asarray(pc.list_value_length(in_k_column).to_numpy(zero_copy_only=False), dtype=np.int64)
    values = pc.list_flatten(in_k_column)
    _no_nulls(values, "inK", path)
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)
    grade_column = _column(table, "grade", "number", path, "a number (float64, null for no grade)")
    grade = np.asarray(grade_column.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    if grade_column.null_count:
        grade[np.asarray(grade_column.is_null().to_numpy(zero_copy_only=False))] = np.nan
    nan_grade = np.isnan(grade) & ~np.asarray(grade_column.is_null().to_numpy(zero_copy_only=False))
    if nan_grade.any():
        raise DataError.at(str(path), _first(nan_grade), "grade", "NaN is not a grade (a missing grade is null)")
    del table
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(k) else np.zeros(0, dtype=np.int64)
    n = np.add.reduceat(flat, starts) if flat.size else np.zeros(len(k), dtype=np.int64)
    n = np.where(lengths > 0, n, 0)
    _check_values(nc, np_, k, lengths, flat, n, grade, path)
    query_all, query_names_all = _sorted_codes(ids, "id", path)
    embedder_all, embedder_names_all = _sorted_codes(embedders, "E", path)
    _check_unique(query_all, embedder_all, nc, np_, k, query_names_all, embedder_names_all, path)
    keep = ~np.isnan(grade)
    in_k = _in_k_matrix(lengths, flat.astype(np.uint8))
    query, query_names = _recode(query_all[keep], query_names_all)
    embedder, embedder_names = _recode(embedder_all[keep], embedder_names_all)
    subset_names, subset_of_query = np.unique(np.asarray([subset_of(q) for q in query_names], dtype=object)
                                              .astype(str), return_inverse=True)
    return GradedTable(
        query=query, query_names=query_names, embedder=embedder, embedder_names=embedder_names,
        subset=subset_of_query.astype(np.int32).ravel()[query], subset_names=[str(x) for x in subset_names],
        Nc=nc[keep], Np=np_[keep], K=k[keep], n=n[keep], in_k=in_k[keep], grade=grade[keep],
        source=source, skipped_missing_grade=int((~keep).sum()),
    )


def _recode(codes: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """Codes renumbered over the names still used (kept rows only), sorted as before."""
    used = np.unique(codes)
    remap = np.full(len(names), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return remap[codes], [names[i] for i in used]


def check_graded_output(path: Path) -> None:
    """Before any work: a Parquet output needs pyarrow (named now, not after the paid calls)."""
    if is_parquet(path):
        _pyarrow()


def write_graded_table(path: Path, records: list[dict[str, Any]], inputs: Iterable[Path | None] = ()) -> Path:
    """The graded records as Parquet (``*.parquet``) or as a JSON list (any other name)."""
    if is_parquet(path):
        return write_graded_parquet(path, records, inputs)
    from ragdiag.io.writer import write_json

    return write_json(path, records, inputs=inputs)
