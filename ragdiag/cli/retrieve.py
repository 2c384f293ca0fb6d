"""``ragdiag retrieve``: top-k passages per query from an index directory (dense, bm25, hybrid)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def retrieve(
    index: Path = typer.Option(..., "--index", help="Index directory from 'ragdiag index build'."),
    queries: Path = typer.Option(..., "--queries", help="BEIR queries.jsonl (_id, text)."),
    out: Path = typer.Option(..., "--out", help="Run file to write (run.jsonl)."),
    k: int = typer.Option(10, "--k", help="Passages per query."),
    mode: str = typer.Option("dense", "--mode", help="dense, bm25 or hybrid (reciprocal rank fusion)."),
    rrf_k: int = typer.Option(60, "--rrf-k", help="RRF constant k (hybrid)."),
    candidates: int = typer.Option(100, "--candidates", help="Depth of each list fused in hybrid mode."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory (default $RAGDIAG_CACHE_DIR)."),
    base_url: str = typer.Option(None, "--base-url", help="API base URL for openai:/voyage: embedders."),
) -> None:
    """Rank the indexed corpus for each query and write run.jsonl (query_id, ids, scores)."""
    from ragdiag.retrieval.search import RetrieveOptions, retrieve as run_retrieve

    opts = RetrieveOptions(index, queries, out, k, mode, rrf_k, candidates, cache_dir, base_url)
    meta = run_retrieve(opts, progress=sys.stderr.isatty())
    typer.echo(f"wrote {meta['n_queries']} rankings ({mode}, k={k}) to {out} in {meta['seconds']:.2f}s")
