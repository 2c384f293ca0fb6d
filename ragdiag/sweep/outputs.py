"""The files of a sweep run: ``sweep.json`` (the result with its run record), ``per_query.jsonl``
(point, query, recall, grade, top-K ids: every mean and share can be recomputed from it) and
``answers.jsonl`` (each ideal answer, or with ``--answers`` each query's reference answers and the usable
ones, and each distinct context's answer and grade, with its calls and its grade per reference).
With ``parquet``, the per-query grades go to ``per_query.parquet`` instead (columns ``point``,
``query``, ``recall``, ``grade`` float64 null when missing, ``ids`` list<string>), which
``correlate --table`` reads columnar.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.io.run_record import RunRecord, stamp
from ragdiag.io.writer import write_json, write_jsonl
from ragdiag.sweep.run import SweepOutcome

FILES = {"result": "sweep.json", "per_query": "per_query.jsonl", "answers": "answers.jsonl"}


def output_paths(out_dir: Path, parquet: bool = False) -> dict[str, Path]:
    files = {**FILES, "per_query": "per_query.parquet"} if parquet else FILES
    return {name: Path(out_dir) / file for name, file in files.items()}


def _write_per_query_parquet(path: Path, rows: list[dict], inputs: list) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ragdiag.io.writer import atomic_path

    schema = pa.schema([("point", pa.string()), ("query", pa.string()), ("recall", pa.float64()),
                        ("grade", pa.float64()), ("ids", pa.list_(pa.string()))])
    table = pa.Table.from_pydict({name: [r[name] for r in rows] for name in schema.names}, schema=schema)
    with atomic_path(path, inputs=inputs) as tmp:
        pq.write_table(table, tmp)


def write_sweep(outcome: SweepOutcome, out_dir: Path, record: RunRecord, parquet: bool = False) -> dict[str, Path]:
    """Write the three files atomically (inputs guarded); returns their paths."""
    paths = output_paths(out_dir, parquet)
    inputs = list(outcome.data.files.values())
    write_json(paths["result"], stamp(outcome.result, record), inputs=inputs)
    if parquet:
        _write_per_query_parquet(paths["per_query"], outcome.per_query, inputs)
    else:
        write_jsonl(paths["per_query"], outcome.per_query, inputs=inputs)
    write_jsonl(paths["answers"], outcome.contexts, inputs=inputs)
    return paths
