"""``ragdiag retrieve`` (also ``ragdiag index search``): top-k passages per query from an index folder."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from ragdiag.cli import params as p


class RunFileFormat(str, Enum):
    """Layout of the run file written by retrieve."""

    jsonl = "jsonl"
    trec = "trec"


def retrieve(
    index_dir: p.IndexDir,
    queries: p.Queries,
    out: p.OutRequired,
    k: p.K = p.DEFAULT_K,
    mode: p.Mode = p.RetrievalMode.dense,
    rrf_k: p.RrfK = p.DEFAULT_RRF_K,
    candidates: p.Candidates = p.DEFAULT_CANDIDATES,
    cache_dir: p.CacheDir = None,
    cache: p.Cache = p.DEFAULT_CACHE_MODE,
    base_url: p.BaseUrl = None,
    run_format: Annotated[RunFileFormat, typer.Option("--format", help="Run file layout: jsonl (query_id, ids, scores per line) or trec (qid Q0 docid rank score tag).", metavar=p.choices_metavar(RunFileFormat))] = RunFileFormat.jsonl,
    tag: Annotated[str, p.text_option("--tag", "Run tag: the last column of a TREC run file (no whitespace).")] = "ragdiag",
    backend: p.Backend = None,
    device: p.DeviceOpt = p.Device.cpu,
    batch_size: p.BatchSize = None,
) -> None:
    """Rank the indexed corpus for each query and write the run (jsonl or TREC)."""
    from ragdiag.commands.retrieve import RetrieveRequest
    from ragdiag.commands.retrieve import run as run_retrieve

    request = RetrieveRequest(index_dir, queries, out, k, mode.value, rrf_k, candidates, cache_dir, base_url,
                              fmt=run_format.value, tag=tag, device=device.value, batch_size=batch_size,
                              backend=backend, cache_mode=cache.value, progress=True)
    result = run_retrieve(request)
    typer.echo(f"wrote {result.n_queries} rankings ({mode.value}, k={k}) to {out} in {result.seconds:.2f}s")
