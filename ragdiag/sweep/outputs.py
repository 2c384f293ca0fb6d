"""The files of a sweep run: ``sweep.json`` (the result with its run record), ``per_query.jsonl``
(point, query, recall, grade, top-K ids: every mean and share can be recomputed from it) and
``answers.jsonl`` (each ideal answer, or with ``--answers`` each query's reference answers and the usable
ones, and each distinct context's answer and grade, with its calls and its grade per reference).
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.io.run_record import RunRecord, stamp
from ragdiag.io.writer import write_json, write_jsonl
from ragdiag.sweep.run import SweepOutcome

FILES = {"result": "sweep.json", "per_query": "per_query.jsonl", "answers": "answers.jsonl"}


def output_paths(out_dir: Path) -> dict[str, Path]:
    return {name: Path(out_dir) / file for name, file in FILES.items()}


def write_sweep(outcome: SweepOutcome, out_dir: Path, record: RunRecord) -> dict[str, Path]:
    """Write the three files atomically (inputs guarded); returns their paths."""
    paths = output_paths(out_dir)
    inputs = list(outcome.data.files.values())
    write_json(paths["result"], stamp(outcome.result, record), inputs=inputs)
    write_jsonl(paths["per_query"], outcome.per_query, inputs=inputs)
    write_jsonl(paths["answers"], outcome.contexts, inputs=inputs)
    return paths
