"""``ragdiag clq``: cost–latency–quality frontier, SLO/budget choices and efficiency (paper 001 §3.3, §5.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o
from ragdiag.measures.registry import CLQ_DEFAULT_QUALITY

FrontierPlot = Annotated[Optional[Path], o.with_note(o.Plot, "The frontier: quality against p50 latency, colour = cost, frontier ringed.")]


def clq(
    configs: Annotated[Path, o.path_option(o.INPUT, "--configs", "Configurations: CSV/TSV/JSONL/JSON rows with name, latency_p50_ms, quality columns METRIC@K (or evaluate + run), and cost_per_1k or the cost model's columns (see the README).")],
    quality: Annotated[str, o.text_option(o.STATISTICS, "--quality", "Quality measures of the frontier, comma list of METRIC@K columns; the first drives the SLO/budget choices.")] = ",".join(map(str, CLQ_DEFAULT_QUALITY)),
    slo_ms: Annotated[Optional[float], o.option(o.STATISTICS, "--slo-ms", help="Latency SLO in ms: the best configuration within it. Range (0, 1e9].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1e9, lo_open=True, optional=True))] = None,
    slo_percentile: Annotated[str, o.text_option(o.STATISTICS, "--slo-percentile", "Latency the SLO applies to: p50 or p95.")] = "p50",
    budget: Annotated[Optional[float], o.option(o.STATISTICS, "--budget", help="Cost budget per 1,000 queries: the best configuration within it. Range [0, 1e12].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1e12, optional=True))] = None,
    fmt: o.FormatOpt = None,
    out: o.Out = None,
    quiet: o.Quiet = False,
    plot: FrontierPlot = None,
) -> None:
    """Cost–latency–quality of retrieval configurations (paper 001): the Pareto frontier over cost,
    latency and quality, the best configuration under an SLO and a budget, the efficiency screening
    score (retrieval-local and end-to-end) and the marginal quality per ms as K grows.

    Efficiency = 1000 · mean(nrecall4@10, nrecall4@30, ra_nwg@10, ra_nwg@30) / latency ms (Table A.1);
    a configuration lacking one of these four columns gets none (–), never a mean of fewer."""
    from ragdiag.commands.clq import ClqRequest, parse_quality, run
    from ragdiag.report import clq_report as report

    result = run(ClqRequest(configs, parse_quality(quality), slo_ms, slo_percentile, budget, out,
                            fmt.value if fmt else None, plot))
    from rich.console import Console

    from ragdiag.cli.show import show_result

    show_result(out, fmt, quiet, lambda: report.render_table(result, Console()),
                lambda shown: report.json_text(result) if shown == "json" else report.csv_text(result))
