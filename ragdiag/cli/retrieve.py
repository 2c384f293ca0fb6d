"""``ragdiag retrieve`` (also ``ragdiag index search``): top-k passages per query from an index folder."""

from __future__ import annotations

import sys
from pathlib import Path

from ragdiag.cli import params as p


def retrieve(
    index_dir: p.IndexDir,
    queries: p.Queries,
    out: p.OutRequired,
    k: p.K = p.DEFAULT_K,
    mode: p.Mode = p.RetrievalMode.dense,
    rrf_k: p.RrfK = p.DEFAULT_RRF_K,
    candidates: p.Candidates = p.DEFAULT_CANDIDATES,
    cache_dir: p.CacheDir = None,
    base_url: p.BaseUrl = None,
) -> None:
    """Rank the indexed corpus for each query and write run.jsonl (query_id, ids, scores)."""
    import typer

    from ragdiag.retrieval.search import RetrieveOptions, retrieve as run_retrieve

    opts = RetrieveOptions(index_dir, queries, out, k, mode.value, rrf_k, candidates, cache_dir, base_url)
    meta = run_retrieve(opts, progress=sys.stderr.isatty())
    typer.echo(f"wrote {meta['n_queries']} rankings ({mode.value}, k={k}) to {out} in {meta['seconds']:.2f}s")
