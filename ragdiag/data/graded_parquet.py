"""The graded table in Parquet: written from graded records, read columnar into a :class:`GradedTable`.

Columns (samples_graded schema): ``id``, ``E`` (string), ``Nc``, ``Np``, ``K`` (int64), ``rank``,
``inK`` (list<int64>), ``answer_ideal``, ``answer_topK`` (string), ``grade`` (float64, null when
the judge gave none), ``P``, ``R`` (float64), and ``grades`` (list<double>, null items and rows kept)
when the records hold ``grade --repeats`` lists. Any other key of the records (``judges``,
``judge_reply``, ``error`` …, or ``grades`` that are not all lists of numbers) is kept as a string
column holding the value's JSON.

The judge's repeated grades are read as the JSON path reads them
(:mod:`ragdiag.data.graded_ratings`): the ``grades`` list column, or the JSON text column an earlier
version wrote (``grades``, else ``judges``), parsed row by row.

The reader never builds a Python object per row: pyarrow reads only the columns correlate needs
(``id``, ``E``, ``Nc``, ``Np``, ``K``, ``inK``, ``grade``), the checks of
:func:`ragdiag.data.schema.check_graded_record` run as vectorised numpy tests, and the result is
the same arrays :func:`ragdiag.data.graded_table.build_graded_table` makes from JSON (same codes,
same order), so both paths give identical correlations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.data.codes import dense_codes
from ragdiag.data.graded_ratings import parquet_ratings
from ragdiag.data.graded_table import GradedSource, GradedTable
from ragdiag.data.schema import subset_of
from ragdiag.errors import DataError, RagdiagError
from ragdiag.extras import install_hint

PARQUET_SUFFIX = ".parquet"
CORE_COLUMNS = ("id", "E", "Nc", "Np", "K", "rank", "inK", "answer_ideal", "answer_topK", "grade", "P", "R")
READ_COLUMNS = ("id", "E", "Nc", "Np", "K", "inK", "grade")
_BATCH_ROWS = 1 << 16  # rows per batch read: bounds the transient Arrow memory


def is_parquet(path: str | Path) -> bool:
    """A graded table is Parquet when its name ends in ``.parquet``."""
    return Path(path).suffix.lower() == PARQUET_SUFFIX


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise RagdiagError(f"Parquet graded tables need pyarrow: {install_hint('pyarrow')}") from None
    return pyarrow


def _schema(pa, extra: list[str], grade_lists: bool = False):
    ints, floats, text = pa.int64(), pa.float64(), pa.string()
    types = {"id": text, "E": text, "Nc": ints, "Np": ints, "K": ints, "rank": pa.list_(ints),
             "inK": pa.list_(ints), "answer_ideal": text, "answer_topK": text, "grade": floats, "P": floats,
             "R": floats}
    lists = [("grades", pa.list_(floats))] if grade_lists else []
    return pa.schema([(name, types[name]) for name in CORE_COLUMNS] + lists + [(name, text) for name in extra])


def _as_grade_lists(records: list[dict[str, Any]]) -> list[list[float | None] | None] | None:
    """The ``grades`` of every record as a list of floats (None: absent) when each is a list of numbers
    or nulls; None when some record's is something else (it is then kept as JSON text)."""
    out: list[list[float | None] | None] = []
    for record in records:
        value = record.get("grades")
        if value is None:
            out.append(None)
        elif isinstance(value, list) and all(g is None or type(g) in (int, float) for g in value):
            out.append([None if g is None else float(g) for g in value])
        else:
            return None
    return out


def graded_arrow_table(records: list[dict[str, Any]]) -> Any:
    """Graded records as one ``pyarrow.Table`` (the command writes it with
    :func:`ragdiag.io.writer.write_parquet`): the core columns typed, every other key as JSON text."""
    import orjson

    pa = _pyarrow()

    extra = sorted({key for record in records for key in record} - set(CORE_COLUMNS))
    columns: dict[str, list[Any]] = {name: [r.get(name) for r in records] for name in CORE_COLUMNS}
    grade_lists = _as_grade_lists(records) if "grades" in extra else None
    if grade_lists is not None:
        extra.remove("grades")
        columns["grades"] = grade_lists
    for name in extra:
        columns[name] = [None if name not in r else orjson.dumps(r[name]).decode() for r in records]
    return pa.Table.from_pydict(columns, schema=_schema(pa, extra, grade_lists is not None))


def graded_parquet_records(path: Path) -> list[dict[str, Any]]:
    """The graded records a Parquet file of :func:`graded_arrow_table` holds, every key as written: the core
    columns as typed, ``grades`` as its list, every other column's JSON text decoded (a null: the record had
    no such key) — for the commands that need each record whole (``calibrate``: answers, ``grade_probs``, repeats)."""
    import orjson

    from ragdiag.io.parquet_input import read_parquet

    table = read_parquet(Path(path))
    extra = [name for name in table.column_names if name not in CORE_COLUMNS]
    records = table.to_pylist()
    for index, record in enumerate(records, start=1):
        for name in extra:
            value = record.pop(name)
            if value is None:
                continue
            try:
                record[name] = orjson.loads(value) if isinstance(value, str) else value
            except orjson.JSONDecodeError:
                raise DataError(f"{path}: row {index}: column '{name}' is not the JSON text ragdiag writes "
                                "(rewrite the file with 'ragdiag grade')") from None
    return records


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


def _first(mask: np.ndarray) -> int:
    """1-based number of the first true row."""
    return int(np.argmax(mask)) + 1


def _check_values(nc, np_, k, n, grade, path: Path) -> None:
    """The invariants of :func:`ragdiag.data.schema.check_graded_record`, one vectorised test each."""
    source = str(path)
    tests = [
        (nc < 1, "Nc", "is not a positive candidate count"),
        (np_ < 1, "Np", "is not a positive count"),
        (np_ > nc, "Np", "positives exceed Nc candidates"),
        (k < 1, "K", "is not a positive cut-off"),
        (k > nc, "K", "cut-off exceeds Nc candidates"),
    ]
    for bad, name, problem in tests:
        if bad.any():
            row = _first(bad)
            raise DataError.at(source, row, name, f"{problem} (Nc {nc[row - 1]}, Np {np_[row - 1]}, K {k[row - 1]})")
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
    """Refuse two rows with the same sample key (id, E, Nc, Np, K): the key coded as one integer
    (:func:`ragdiag.data.codes.dense_codes`); a code seen twice names both rows (1-based)."""
    if len(k) < 2:
        return
    _, by_query = dense_codes(query.astype(np.int64) * (len(embedders) or 1) + embedder)
    _, by_size = dense_codes(nc * (int(np_.max()) + 1) + np_)
    _, ranking = dense_codes(by_query * (int(by_size.max()) + 1) + by_size)
    distinct, sample = dense_codes(ranking * (int(k.max()) + 1) + k)
    if len(distinct) == len(k):
        return
    first = np.full(len(distinct), len(k), dtype=np.int64)
    np.minimum.at(first, sample, np.arange(len(k)))
    b = int(np.argmax(first[sample] != np.arange(len(k))))
    a = int(first[sample[b]])
    raise DataError(f"{path}: records {a + 1} and {b + 1} are the same sample (id '{names[query[a]]}', "
                    f"E '{embedders[embedder[a]]}', Nc {nc[a]}, Np {np_[a]}, K {k[a]}); remove one")


class _Names:
    """Global integer codes for the strings of a column read in batches (first-seen order)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}

    def encode(self, array, name: str, path: Path, offset: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        if array.null_count:
            raise DataError.at(str(path), offset + _first(np.asarray(array.is_null().to_numpy(zero_copy_only=False))),
                               name, "missing (null)")
        encoded = array if pa.types.is_dictionary(array.type) else pc.dictionary_encode(array)
        lookup = np.asarray([self.code.setdefault(str(v), len(self.code)) for v in encoded.dictionary.to_pylist()],
                            dtype=np.int32)
        return lookup[np.asarray(_values(encoded.indices), dtype=np.int64)]

    def sorted(self, codes: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Codes renumbered into the sorted names (as ``np.unique`` numbers them on the JSON path)."""
        names = list(self.code)
        order = np.argsort(np.asarray(names, dtype=object), kind="stable") if names else np.zeros(0, dtype=np.int64)
        rank = np.empty(len(names), dtype=np.int32)
        rank[order] = np.arange(len(names), dtype=np.int32)
        return rank[codes], [names[i] for i in order]


def _check_schema(schema, path: Path) -> None:
    """Every column correlate reads is present with a usable type."""
    import pyarrow.types as pt

    wanted = {"id": ("string", "a string"), "E": ("string", "a string"), "Nc": ("int", "an integer"),
              "Np": ("int", "an integer"), "K": ("int", "an integer"), "inK": ("list", "a list of integers"),
              "grade": ("number", "a number (float64, null for no grade)")}
    for name, (kind, what) in wanted.items():
        if schema.get_field_index(name) < 0:
            raise DataError(f"{path}: column '{name}' is missing (a graded table needs {', '.join(READ_COLUMNS)})")
        typ = schema.field(name).type
        typ = typ.value_type if pt.is_dictionary(typ) else typ
        ok = {"string": pt.is_string(typ) or pt.is_large_string(typ), "int": pt.is_integer(typ),
              "number": pt.is_integer(typ) or pt.is_floating(typ),
              "list": (pt.is_list(typ) or pt.is_large_list(typ) or pt.is_fixed_size_list(typ))
              and pt.is_integer(typ.value_type)}[kind]
        if not ok:
            raise DataError(f"{path}: column '{name}' has type {schema.field(name).type}, expected {what}")


def _open(path: Path):
    """The ParquetFile, its schema checked; one line when the file is missing or not Parquet."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a regular file")
    try:
        reader = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({str(err).splitlines()[0][:160]})") from None
    _check_schema(reader.schema_arrow, path)
    return reader


def _batches(reader, path: Path, columns: list[str]):
    pa = _pyarrow()
    try:
        yield from reader.iter_batches(batch_size=_BATCH_ROWS, columns=columns)
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({str(err).splitlines()[0][:160]})") from None


def _numbers(array, name: str, path: Path, offset: int, nullable: bool = False) -> np.ndarray:
    import pyarrow as pa

    if array.null_count and not nullable:
        raise DataError.at(str(path), offset + _first(np.asarray(array.is_null().to_numpy(zero_copy_only=False))),
                           name, "missing (null)")
    if nullable:
        values = np.array(_values(array.cast(pa.float64())), dtype=np.float64)  # a copy: NaN written where null
        if array.null_count:
            nulls = np.asarray(array.is_null().to_numpy(zero_copy_only=False))
            if np.isnan(values[~nulls]).any():
                bad = np.isnan(values) & ~nulls
                raise DataError.at(str(path), offset + _first(bad), name, "NaN is not a grade (a missing grade is null)")
            values[nulls] = np.nan
        elif np.isnan(values).any():
            raise DataError.at(str(path), offset + _first(np.isnan(values)), name,
                               "NaN is not a grade (a missing grade is null)")
        return values
    return np.asarray(_values(array), dtype=np.int64)


def read_graded_parquet(path: Path, source: GradedSource) -> GradedTable:
    """The graded table of a Parquet file, read in batches of 2^16 rows into preallocated numpy
    columns; rows with a null grade are skipped and counted.

    Errors (one line each): not a Parquet file (or truncated), a missing column, a column of the wrong
    type, a null where a value is required, and every invariant of the samples_graded schema with its
    row number (1-based) and field.
    """
    import pyarrow.compute as pc

    path = Path(path)
    reader = _open(path)
    total = reader.metadata.num_rows
    k = np.empty(total, dtype=np.int64)
    offset = 0
    for batch in _batches(reader, path, ["K"]):
        k[offset:offset + batch.num_rows] = _numbers(batch.column(0), "K", path, offset)
        offset += batch.num_rows
    width = int(k.max()) if total else 0
    if total and width > 100_000:
        raise DataError.at(str(path), _first(k == width), "K", f"cut-off {width} is too large")
    nc, np_, n = (np.empty(total, dtype=np.int64) for _ in range(3))
    grade = np.empty(total, dtype=np.float64)
    in_k = np.zeros((total, max(width, 0)), dtype=np.uint8)
    query_all, embedder_all = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.int32)
    queries, embedders = _Names(), _Names()
    offset = 0
    for batch in _batches(reader, path, ["id", "E", "Nc", "Np", "inK", "grade"]):
        rows = slice(offset, offset + batch.num_rows)
        column = dict(zip(batch.schema.names, batch.columns))
        query_all[rows] = queries.encode(column["id"], "id", path, offset)
        embedder_all[rows] = embedders.encode(column["E"], "E", path, offset)
        nc[rows] = _numbers(column["Nc"], "Nc", path, offset)
        np_[rows] = _numbers(column["Np"], "Np", path, offset)
        grade[rows] = _numbers(column["grade"], "grade", path, offset, nullable=True)
        n[rows] = _fill_in_k(column["inK"], k[rows], in_k[rows], path, offset, pc)
        offset += batch.num_rows
    _check_values(nc, np_, k, n, grade, path)
    query_all, query_names_all = queries.sorted(query_all)
    embedder_all, embedder_names_all = embedders.sorted(embedder_all)
    _check_unique(query_all, embedder_all, nc, np_, k, query_names_all, embedder_names_all, path)
    keep = ~np.isnan(grade)
    if not keep.all():
        nc, np_, k, n, in_k, grade = (a[keep] for a in (nc, np_, k, n, in_k, grade))
        query_all, embedder_all = query_all[keep], embedder_all[keep]
    ratings, ratings_source = parquet_ratings(reader.schema_arrow, lambda name: _batches(reader, path, [name]),
                                              path, keep)
    query, query_names = _recode(query_all, query_names_all)
    embedder, embedder_names = _recode(embedder_all, embedder_names_all)
    subset_names, subset_of_query = np.unique(np.asarray([subset_of(q) for q in query_names], dtype=object)
                                              .astype(str), return_inverse=True)
    return GradedTable(
        query=query, query_names=query_names, embedder=embedder, embedder_names=embedder_names,
        subset=subset_of_query.astype(np.int32).ravel()[query], subset_names=[str(x) for x in subset_names],
        Nc=nc, Np=np_, K=k, n=n, in_k=in_k, grade=grade,
        source=source, skipped_missing_grade=int((~keep).sum()), ratings=ratings, ratings_source=ratings_source,
    )


def _fill_in_k(array, k: np.ndarray, out: np.ndarray, path: Path, offset: int, pc) -> np.ndarray:
    """Write one batch's inK lists into its rows of the zero-padded matrix; returns n = sum(inK)."""
    source = str(path)
    if array.null_count:
        raise DataError.at(source, offset + _first(np.asarray(array.is_null().to_numpy(zero_copy_only=False))),
                           "inK", "missing (null)")
    lengths = np.asarray(_values(pc.list_value_length(array)), dtype=np.int64)
    if (lengths != k).any():
        row = _first(lengths != k)
        raise DataError.at(source, offset + row, "inK", f"has {lengths[row - 1]} items but K = {k[row - 1]}")
    values = pc.list_flatten(array)
    if values.null_count:
        item = int(np.argmax(np.asarray(values.is_null().to_numpy(zero_copy_only=False))))
        raise DataError.at(source, offset + int(np.searchsorted(np.cumsum(lengths), item, side="right")) + 1,
                           "inK", "items must be 0 or 1 (null)")
    flat = np.asarray(_values(values))
    bad = (flat < 0) | (flat > 1)
    if bad.any():
        item = int(np.argmax(bad))
        raise DataError.at(source, offset + int(np.searchsorted(np.cumsum(lengths), item, side="right")) + 1,
                           "inK", "items must be 0 or 1")
    out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = flat.astype(np.uint8)
    n = np.zeros(len(out), dtype=np.int64)
    for column in out.T:  # Σ inK, a column at a time (rows are short, columns long)
        n += column
    return n


def _values(array) -> np.ndarray:
    """The values of a pyarrow array as numpy: its data buffer viewed in place when it has no nulls and a
    fixed-width numeric type (pyarrow's ``to_numpy`` imports pandas, 0.2 s), else ``to_numpy``."""
    import pyarrow.types as pt

    typ = array.type
    if array.null_count == 0 and (pt.is_integer(typ) or pt.is_floating(typ)):
        return np.frombuffer(array.buffers()[1], dtype=typ.to_pandas_dtype(), count=len(array),
                             offset=array.offset * typ.bit_width // 8)
    return np.asarray(array.to_numpy(zero_copy_only=False))


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
