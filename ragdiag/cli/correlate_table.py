"""``ragdiag correlate --table``: the bring-your-own-data path of ``correlate`` (glue only)."""

from __future__ import annotations

from pathlib import Path

import typer

from ragdiag.errors import RagdiagError


def correlate_metric_table(path: Path, grade_col: str, measure_cols: str | None, group_col: str | None,
                           id_col: str | None, corr: str | None, min_samples: int | None, bootstrap: int, seed: int,
                           compare: str | None, fmt: str | None, out: Path | None, plot: Path | None) -> None:
    """Load the table, correlate each metric column with the grade, print and write like ``correlate``."""
    from rich.console import Console

    from ragdiag.data.metric_table import load_metric_table
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import guard_outputs
    from ragdiag.metrics.analysis import parse_kinds
    from ragdiag.metrics.table_correlation import TableOptions, table_report
    from ragdiag.options import parse_pair
    from ragdiag.report.correlate_report import print_report, render_text, write_heatmap
    from ragdiag.report.correlation_file import write_correlation

    if not measure_cols:
        raise RagdiagError("--table needs --measure-cols, e.g. --measure-cols ndcg@10,recall@10")
    columns = [c.strip() for c in measure_cols.split(",") if c.strip()]
    pair = parse_pair(compare, "metric columns", "ndcg@10,recall@10") if compare else None
    kinds = parse_kinds(corr or "spearman")
    guard_outputs([out, plot], [path])
    record = start_run("ragdiag correlate", inputs=[path], seeds={"bootstrap": seed})
    table = load_metric_table(path, grade_col, columns, group_col, id_col)
    opts = TableOptions(kinds=kinds, min_samples=10 if min_samples is None else min_samples, bootstrap=bootstrap,
                        seed=seed, compare=pair)
    report = table_report(table, opts, grade_col, group_col, id_col)
    report["meta"]["shown_kinds"] = list(kinds)
    stamp(report, record)
    if out is not None:
        write_correlation(report, out, fmt, inputs=[path])
    if plot is not None:
        write_heatmap(report, plot)
    if fmt in (None, "table"):
        print_report(report, Console())
    elif out is None:
        typer.echo(render_text(report, fmt), nl=False)
