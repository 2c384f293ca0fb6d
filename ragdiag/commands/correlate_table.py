"""``ragdiag correlate --table``: the bring-your-own-data path of ``correlate`` — any per-query metric
columns correlated with a grade column (:mod:`ragdiag.metrics.table_correlation`), written and
returned like ``correlate``'s result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiag.errors import RagdiagError
from ragdiag.metrics.correlate_result import CorrelateResult

if TYPE_CHECKING:
    from ragdiag.commands.correlate import CorrelateRequest

DEFAULT_TABLE_MIN_SAMPLES = 10


def run_table(request: CorrelateRequest) -> CorrelateResult:
    """Load the table, correlate each metric column with the grade, write ``--out`` / ``--plot``.
    ``request`` was checked by :func:`ragdiag.commands.correlate.check_request`."""
    from ragdiag.commands.correlate import write_outputs
    from ragdiag.data.metric_table import load_metric_table
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import guard_outputs
    from ragdiag.metrics.analysis import parse_kinds
    from ragdiag.metrics.table_correlation import TableOptions, table_report

    if not request.measure_cols:
        raise RagdiagError("--table needs --measure-cols, e.g. --measure-cols ndcg@10,recall@10")
    kinds = parse_kinds(request.corr or "spearman")
    guard_outputs([request.out, request.plot], [request.table])
    record = start_run("ragdiag correlate", inputs=[request.table], seeds={"bootstrap": request.seed})
    table = load_metric_table(request.table, request.grade_col, list(request.measure_cols), request.group_col,
                              request.id_col)
    opts = TableOptions(kinds=kinds, min_samples=DEFAULT_TABLE_MIN_SAMPLES if request.min_samples is None
                        else request.min_samples, bootstrap=request.bootstrap, seed=request.seed, compare=request.compare)
    doc = table_report(table, opts, request.grade_col, request.group_col, request.id_col)
    doc["meta"]["shown_kinds"] = list(kinds)
    result = CorrelateResult.from_json(stamp(doc, record))
    write_outputs(result, request, inputs=[request.table])
    return result
