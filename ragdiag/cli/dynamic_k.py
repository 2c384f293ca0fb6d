"""``ragdiag dynamic-k``: route uncertain queries to a larger candidate pool (paper 001 §5.2, §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p
from ragdiag.io.lists import parse_ks

SweepPlot = p.with_note(p.Plot, "RA-nWG against mean candidates per query, dynamic sweep against fixed K.")


def dynamic_k(
    qrels: p.retold(p.Qrels, "Graded qrels 1–5 (BEIR TSV or TREC; binary 0/1 read as 1 and 5).", kind=Path),
    run_low: Annotated[Path, p.path_option("--run-low", "The final ranking when a query gets K_low candidates (run.jsonl or TREC), at least K_low deep.")],
    run_high: Annotated[Path, p.path_option("--run-high", "The final ranking when it gets K_high candidates, at least K_high deep.")],
    signal_run: Annotated[Optional[Path], p.path_option("--signal-run", "First-stage run with scores (e.g. dense cosine) whose margin rank 1 − rank --margin-rank is the signal (default: --run-low).")] = None,
    margin_rank: Annotated[int, typer.Option("--margin-rank", help="Rank r of the margin score(1) − score(r).", min=2, max=100_000, metavar=p.INTEGER)] = 10,
    signal: Annotated[Optional[Path], p.path_option("--signal", "Instead of a margin: JSONL of {query_id, value} (e.g. a names/noise probe drop).")] = None,
    escalate_when: Annotated[str, p.text_option("--escalate-when", "Escalate to K_high when the signal is 'below' θ (margins) or 'above' θ (drops).")] = "below",
    k_low: Annotated[int, typer.Option("--k-low", help="Candidates for confident queries.", min=1, max=100_000, metavar=p.INTEGER)] = 50,
    k_high: Annotated[int, typer.Option("--k-high", help="Candidates for uncertain queries.", min=2, max=100_000, metavar=p.INTEGER)] = 100,
    ks: Annotated[str, p.text_option("--ks", "Cut-offs of the quality metrics (each ≤ K_low).")] = "10,30",
    steps: Annotated[int, typer.Option("--steps", help="Thresholds swept: this many quantiles of the signal, evenly spaced from 0 to 1 (fixed K_low and K_high are the ends).", min=2, max=1001, metavar=p.INTEGER)] = 11,
    tokens_per_candidate: Annotated[float, typer.Option("--tokens-per-candidate", help="Tokens per candidate for the cost. Range [0, 1e7].", metavar=p.FLOAT, callback=p.finite_float(0.0, 1e7))] = 500.0,
    price: Annotated[float, typer.Option("--price", help="Reranking price per million tokens (0: cost column 0). Range [0, 1e6].", metavar=p.FLOAT, callback=p.finite_float(0.0, 1e6))] = 0.0,
    bootstrap: p.Bootstrap = 1000,
    seed: p.Seed = p.DEFAULT_SEED,
    fmt: p.FormatOpt = None,
    out: p.Out = None,
    quiet: p.Quiet = False,
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
