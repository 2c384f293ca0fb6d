"""``ragdiag testset certify``: can one label set (synthetic questions, LLM qrels) rank systems like
another (human qrels)?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import PanelCommand, PanelGroup

app = typer.Typer(cls=PanelGroup, no_args_is_help=True,
                  help="Synthetic test collections from a corpus, and the certificate of how far any cheap labels rank systems like human ones.")

RunFiles = Annotated[Optional[list[Path]], typer.Argument(
    metavar="RUN", show_default=False,
    help="More runs: --runs R1 R2 R3 … takes every run file after the flag (or repeat --runs).")]


@app.command("certify", cls=PanelCommand)
def certify(
    a: Annotated[Path, o.path_option(o.INPUT, "--a", "Label set A (the one to certify): a qrels file, or a BEIR folder (its qrels/test.tsv).")],
    b: Annotated[Path, o.path_option(o.INPUT, "--b", "Label set B (the reference, e.g. human qrels): a qrels file or a BEIR folder.")],
    runs: Annotated[list[Path], o.path_option(o.INPUT, "--runs", "Runs (retrieval configurations, run.jsonl or TREC), at least 5, each ranking the queries of A and of B.")],
    more_runs: RunFiles = None,
    metric: Annotated[str, o.text_option(o.STATISTICS, "--metric", "The metric that orders the systems: one METRIC@K of the evaluate registry.")] = "ndcg@10",
    top: Annotated[int, o.int_option(o.STATISTICS, "--top", "τ among the best N systems of B (2 … the number of runs).", 2, 10_000)] = 5,
    bootstrap: Annotated[int, o.retold(o.Bootstrap, "Bootstrap resamples of the queries (seeded by --seed) for 95% intervals of τ, τ_AP and the gap; 0 = no intervals.")] = 1000,
    seed: o.Seed = 0,
    bm25_run: Annotated[Optional[Path], o.path_option(o.INPUT, "--bm25-run", "With --dense-run: one of --runs, the BM25 side of the lexical-bias gap (BM25 − dense under A and B).")] = None,
    dense_run: Annotated[Optional[Path], o.path_option(o.INPUT, "--dense-run", "With --bm25-run: one of --runs, the dense side of the gap.")] = None,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the certificate as JSON (with its run record).")] = None,
) -> None:
    """Certificate of label set A against B over ≥ 5 runs: Kendall τ, τ_AP, τ among the top systems,
    the largest pairwise swap, bootstrap intervals over queries, a verdict in words, and the BM25 −
    dense gap under each. Methods: docs/methods.md#testset-certificate."""
    from ragdiag.commands.testset import CertifyOptions, CertifyRequest, certify_run
    from ragdiag.report.testset_report import certificate_text

    options = CertifyOptions(top=top, bootstrap=bootstrap, seed=seed)
    result = certify_run(CertifyRequest(a, b, [*runs, *(more_runs or [])], metric, options, bm25_run, dense_run, out))
    typer.echo(certificate_text(result))
    if out is not None:
        typer.echo(f"wrote {out} (certificate)", err=True)
