"""``ragdiag dynamic-k``: check the paths, read qrels, the K_low and K_high runs and the signal;
sweep; write the result (``--out``) and the plot; stamp."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.evaluate.dynamic_k import check_params, dynamic_k, score_margins
from ragdiag.evaluate.inputs import align_run, load_graded_qrels
from ragdiag.io.jsonl import read_jsonl_lines
from ragdiag.io.out_format import write_result
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.report import dynamic_k_report as report
from ragdiag.results.dynamic_k import DynamicKMeta, DynamicKParams, DynamicKResult

__all__ = ["DynamicKParams", "DynamicKRequest", "run"]


@dataclass
class DynamicKRequest:
    qrels: Path
    run_low: Path
    run_high: Path
    params: DynamicKParams
    signal_run: Path | None = None
    margin_rank: int = 10
    signal: Path | None = None
    out: Path | None = None
    fmt: str | None = None  # --format; None: the suffix of --out decides
    plot: Path | None = None

    @property
    def inputs(self) -> dict[str, Path | None]:
        return {"--qrels": self.qrels, "--run-low": self.run_low, "--run-high": self.run_high,
                "--signal-run": self.signal_run, "--signal": self.signal}


def read_signal(path: Path, query_ids: list[str]) -> np.ndarray:
    """A JSONL file of ``{"query_id": …, "value": …}``; every judged query needs a finite value."""
    source = str(path)
    values: dict[str, float] = {}
    line_of: dict[str, int] = {}
    for number, row in read_jsonl_lines(path):
        if not isinstance(row, dict) or "query_id" not in row or "value" not in row:
            raise DataError(f"{source}: line {number}: expected an object with query_id and value")
        value = row["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise DataError(f"{source}: line {number}: field 'value': expected a finite number, got {value!r}")
        query = str(row["query_id"])
        if query in line_of:
            raise DataError(f"{source}: line {number}: field 'query_id': '{query}' already has a value on line "
                            f"{line_of[query]} (one value per query)")
        values[query], line_of[query] = float(value), number
    missing = [q for q in query_ids if q not in values]
    if missing:
        raise DataError(f"{source}: no signal for {len(missing)} judged queries (first: '{missing[0]}')")
    return np.array([values[q] for q in query_ids])


def _margins(path: Path, query_ids: list[str], rank: int) -> np.ndarray:
    from ragdiag.data.qrels_runs import read_run

    run = read_run(path)
    missing = [q for q in query_ids if q not in run]
    if missing:
        raise DataError(f"{path}: {len(missing)} judged queries are not in the signal run (first: '{missing[0]}')")
    return score_margins([[score for _, score in run[q]] for q in query_ids], rank)


def run(request: DynamicKRequest) -> DynamicKResult:
    """Check, sweep, write ``--out`` and ``--plot``; the result carries ``meta`` and its run record."""
    check_paths(inputs=request.inputs, outputs={"--out": request.out}, plots={"--plot": request.plot})
    p = request.params
    check_params(p)
    if request.signal is not None and request.signal_run is not None:
        raise RagdiagError("--signal and --signal-run are two sources for the same signal: give one")
    inputs = [path for path in request.inputs.values() if path is not None]
    record = start_run("ragdiag dynamic-k", inputs=inputs, seeds={"bootstrap": p.seed})
    qrels = load_graded_qrels(request.qrels)
    low = align_run(request.run_low, qrels)
    high = align_run(request.run_high, qrels, [low.name])
    for run_, k in ((low, p.k_low), (high, p.k_high)):
        if run_.depth < k:
            raise DataError(f"{run_.source}: ranks only {run_.depth} passages per query at most, fewer than the K "
                            f"it stands for ({k}): PROC at that pool depth needs the whole pool")
    if request.signal is not None:
        signal, name = read_signal(request.signal, qrels.query_ids), f"values of {request.signal}"
    else:
        source = request.signal_run or request.run_low
        signal = _margins(source, qrels.query_ids, request.margin_rank)
        name = f"score margin rank 1 − rank {request.margin_rank} of {source}"
    result = dynamic_k(low.ranked, high.ranked, qrels.pool_counts(), signal, p, name)
    result.meta = DynamicKMeta("ragdiag dynamic-k", str(request.qrels), qrels.binary, str(request.run_low),
                               str(request.run_high))
    result.run_record = record.to_json()
    if request.out is not None:
        write_result(request.out, request.fmt, {"json": lambda: report.json_text(result),
                                                "csv": lambda: report.csv_text(result),
                                                "table": lambda: report.table_text(result)}, inputs)
    if request.plot is not None:
        from ragdiag.io.writer import write_figure

        write_figure(request.plot, report.plot(result), inputs=inputs)
    return result
