"""The one pipeline function behind ``ragdiag evaluate``: read inputs, evaluate, stamp the run record."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.evaluate.evaluation import EvaluateParams, conventions, evaluate
from ragdiag.evaluate.inputs import align_run, load_answers, load_graded_qrels
from ragdiag.io.run_record import stamp, start_run


def check_params(p: EvaluateParams) -> None:
    """Cross-option checks done before any file is read (single-option ranges are checked by the CLI)."""
    if not p.ks:
        raise RagdiagError("no cut-off K given")
    if p.pool_depth < max(p.ks):
        raise RagdiagError(f"the pool depth {p.pool_depth} is below the largest K {max(p.ks)}: PROC needs a pool at least K deep")


def evaluate_files(qrels_path: Path, run_paths: Sequence[Path], p: EvaluateParams, answers_path: Path | None = None,
                   log: Callable[[str], None] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate every run against the qrels; returns the stamped result and the per-query rows.
    ``log`` receives one line per stage (reading, metrics and bootstrap), for progress on stderr."""
    check_params(p)
    say = log or (lambda line: None)
    record = start_run("ragdiag evaluate", inputs=[qrels_path, *run_paths, answers_path], seeds={"bootstrap": p.seed})
    started = time.perf_counter()
    qrels = load_graded_qrels(qrels_path)
    say(f"read {qrels_path}: {len(qrels.grades)} judged queries ({time.perf_counter() - started:.1f}s)")
    runs = []
    for path in run_paths:
        runs.append(align_run(path, qrels, [r.name for r in runs]))
        say(f"read {path} as run '{runs[-1].name}' ({time.perf_counter() - started:.1f}s)")
    answers = load_answers(answers_path) if answers_path is not None else None
    say(f"computing {len(p.metrics)} metrics at K {list(p.ks)} and {p.bootstrap} bootstrap replicates (seed {p.seed})")
    result, rows = evaluate(qrels, runs, p, answers, str(answers_path) if answers_path else "")
    say(f"done in {time.perf_counter() - started:.1f}s")
    meta = {
        "command": "ragdiag evaluate",
        "qrels": str(qrels_path),
        "qrels_binary": qrels.binary,
        "n_queries": len(qrels.query_ids),
        "runs": [{"run": r.name, "path": r.source, "depth": r.depth, "skipped_queries": r.skipped_queries} for r in runs],
        "conventions": conventions(p, qrels),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return stamp({"meta": meta, **result}, record), rows
