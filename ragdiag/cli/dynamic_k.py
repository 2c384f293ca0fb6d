"""``ragdiag dynamic-k``: route uncertain queries to a larger candidate pool (paper 001 §5.2, §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o
from ragdiag.io.lists import parse_ks

SweepPlot = Annotated[Optional[Path], o.with_note(o.Plot, "RA-nWG against mean candidates per query, dynamic sweep against fixed K.")]


def dynamic_k(
    qrels: Annotated[Path, o.retold(o.Qrels, "Graded qrels 1–5 (BEIR TSV or TREC; binary 0/1 read as 1 and 5).")],
    run_low: Annotated[Path, o.path_option(o.INPUT, "--run-low", "The final ranking when a query gets K_low candidates (run.jsonl or TREC), at least K_low deep.")],
    run_high: Annotated[Path, o.path_option(o.INPUT, "--run-high", "The final ranking when it gets K_high candidates, at least K_high deep.")],
    signal_run: Annotated[Optional[Path], o.path_option(o.INPUT, "--signal-run", "First-stage run with scores (e.g. dense cosine) whose margin rank 1 − rank --margin-rank is the signal (default: --run-low).")] = None,
    margin_rank: Annotated[int, o.option(o.RETRIEVAL, "--margin-rank", help="Rank r of the margin score(1) − score(r).", min=2, max=100_000, metavar=o.INTEGER)] = 10,
    signal: Annotated[Optional[Path], o.path_option(o.INPUT, "--signal", "Instead of a margin: JSONL of {query_id, value} (e.g. a names/noise probe drop).")] = None,
    escalate_when: Annotated[str, o.text_option(o.RETRIEVAL, "--escalate-when", "Escalate to K_high when the signal is 'below' θ (margins) or 'above' θ (drops).")] = "below",
    k_low: Annotated[int, o.option(o.RETRIEVAL, "--k-low", help="Candidates for confident queries.", min=1, max=100_000, metavar=o.INTEGER)] = 50,
    k_high: Annotated[int, o.option(o.RETRIEVAL, "--k-high", help="Candidates for uncertain queries.", min=2, max=100_000, metavar=o.INTEGER)] = 100,
    ks: Annotated[str, o.text_option(o.STATISTICS, "--ks", "Cut-offs of the quality metrics (each ≤ K_low).")] = "10,30",
    steps: Annotated[int, o.option(o.RETRIEVAL, "--steps", help="Thresholds swept: this many quantiles of the signal, evenly spaced from 0 to 1 (fixed K_low and K_high are the ends).", min=2, max=1001, metavar=o.INTEGER)] = 11,
    tokens_per_candidate: Annotated[float, o.option(o.STATISTICS, "--tokens-per-candidate", help="Tokens per candidate for the cost. Range [0, 1e7].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1e7))] = 500.0,
    price: Annotated[float, o.option(o.STATISTICS, "--price", help="Reranking price per million tokens (0: cost column 0). Range [0, 1e6].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1e6))] = 0.0,
    bootstrap: o.Bootstrap = 1000,
    seed: o.Seed = o.DEFAULT_SEED,
    fmt: o.FormatOpt = None,
    out: o.Out = None,
    quiet: o.Quiet = False,
    plot: SweepPlot = None,
) -> None:
    """Dynamic K: escalate to K_high only the queries whose signal looks uncertain, sweep the
    threshold, and compare RA-nWG, N-Recall4+, PROC and cost with fixed K_low and K_high on the same
    queries, with paired bootstrap intervals (paper 001 §5.2, §6)."""
    from ragdiag.commands.dynamic_k import DynamicKParams, DynamicKRequest, run
    from ragdiag.report import dynamic_k_report as report

    params = DynamicKParams(k_low=k_low, k_high=k_high, ks=parse_ks(ks, "--ks"), escalate_when=escalate_when, steps=steps,
                            tokens_per_candidate=tokens_per_candidate, price_per_mtok=price, bootstrap=bootstrap,
                            seed=seed)
    result = run(DynamicKRequest(qrels, run_low, run_high, params, signal_run, margin_rank, signal, out,
                                 fmt.value if fmt else None, plot))
    from rich.console import Console

    from ragdiag.cli.show import show_result

    show_result(out, fmt, quiet, lambda: report.render_table(result, Console()),
                lambda shown: report.json_text(result) if shown == "json" else report.csv_text(result))
