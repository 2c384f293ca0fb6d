"""``ragdiag clq``: cost–latency–quality frontier, SLO/budget choices and efficiency (paper 001 §3.3, §5.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p


def _json(doc: dict) -> str:
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def clq(
    configs: Annotated[Path, p.path_option("--configs", "Configurations: CSV/TSV/JSONL/JSON rows with name, latency_p50_ms, quality columns METRIC@K (or evaluate + run), and cost_per_1k or the cost model's columns (see the README).")],
    quality: Annotated[str, p.text_option("--quality", "Quality measures of the frontier, comma list of METRIC@K columns; the first drives the SLO/budget choices.")] = "ra_nwg@10,nrecall4@10",
    slo_ms: Annotated[Optional[float], typer.Option("--slo-ms", help="Latency SLO in ms: the best configuration within it. Range (0, 1e9].", metavar=p.FLOAT, callback=p.finite_float(0.0, 1e9, lo_open=True, optional=True))] = None,
    slo_percentile: Annotated[str, p.text_option("--slo-percentile", "Latency the SLO applies to: p50 or p95.")] = "p50",
    budget: Annotated[Optional[float], typer.Option("--budget", help="Cost budget per 1,000 queries: the best configuration within it. Range [0, 1e12].", metavar=p.FLOAT, callback=p.finite_float(0.0, 1e12, optional=True))] = None,
    fmt: Annotated[Optional[p.OutputFormat], typer.Option("--format", help="What to print or write: table, json or csv (default: table; with --out, the suffix decides).", metavar=p.choices_metavar(p.OutputFormat))] = None,
    out: Annotated[Optional[Path], p.path_option("--out", "Write the result: the suffix picks the format (.json, .csv, .txt/.md for the table; else JSON), --format overrides.")] = None,
    plot: Annotated[Optional[Path], p.path_option("--plot", "Frontier PNG: quality against p50 latency, colour = cost, frontier ringed.")] = None,
) -> None:
    """Cost–latency–quality of retrieval configurations (paper 001): the Pareto frontier over cost,
    latency and quality, the best configuration under an SLO and a budget, the efficiency screening
    score (retrieval-local and end-to-end) and the marginal quality per ms as K grows."""
    from rich.console import Console

    from ragdiag.commands.clq import ClqRequest, run
    from ragdiag.errors import RagdiagError
    from ragdiag.io.paths import check_paths
    from ragdiag.io.writer import write_text
    from ragdiag.report.clq_report import csv_text, render_table, table_text, write_plot

    check_paths(inputs={"--configs": configs}, outputs={"--out": out}, plots={"--plot": plot})
    if not configs.is_file():
        raise RagdiagError(f"--configs {configs}: no such file")
    names = tuple(dict.fromkeys(q.strip() for q in quality.split(",") if q.strip()))
    if not names or any("@" not in q for q in names):
        raise RagdiagError(f"--quality '{quality}': expected METRIC@K names, e.g. ra_nwg@10,nrecall4@10")
    _, doc = run(ClqRequest(configs, names, slo_ms, slo_percentile, budget))
    chosen = fmt or p.OutputFormat.table
    if out is not None:
        from ragdiag.io.out_format import out_format

        kind = out_format(out, fmt.value if fmt else None)
        text = {"json": lambda: _json(doc), "csv": lambda: csv_text(doc)}.get(kind, lambda: table_text(doc))()
        write_text(out, text, inputs=[configs])
    if plot is not None:
        write_plot(doc, plot)
    if chosen is p.OutputFormat.table:
        render_table(doc, Console())
    elif out is None:
        typer.echo(_json(doc) if chosen is p.OutputFormat.json else csv_text(doc), nl=False)
