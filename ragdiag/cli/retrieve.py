"""``ragdiag retrieve`` (also ``ragdiag index search``): top-k passages per query from an index folder."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o


class RunFileFormat(str, Enum):
    """Layout of the run file written by retrieve."""

    jsonl = "jsonl"
    trec = "trec"


def retrieve(
    index_dir: o.IndexDir,
    queries: o.Queries,
    out: o.OutRequired,
    fields: o.Fields = None,
    id_field: o.IdField = None,
    query_field: o.QueryField = None,
    queries_format: o.QueriesFormat = None,
    k: o.K = o.DEFAULT_K,
    mode: o.Mode = o.RetrievalMode.dense,
    rrf_k: o.RrfK = o.DEFAULT_RRF_K,
    candidates: o.Candidates = o.DEFAULT_CANDIDATES,
    cache_dir: o.EmbeddingCacheDir = None,
    cache: o.EmbeddingCache = o.DEFAULT_CACHE_MODE,
    base_url: o.EmbeddingBaseUrl = None,
    run_format: Annotated[RunFileFormat, o.option(o.OUTPUT, "--format", help="Run file layout: jsonl (query_id, ids, scores per line) or trec (qid Q0 docid rank score tag).", metavar=o.choices_metavar(RunFileFormat))] = RunFileFormat.jsonl,
    tag: Annotated[str, o.text_option(o.OUTPUT, "--tag", "Run tag: the last column of a TREC run file (no whitespace).")] = "ragdiag",
    backend: Annotated[Optional[str], o.retold(o.Backend)] = None,
    device: o.DeviceOpt = o.Device.cpu,
    batch_size: o.BatchSize = None,
) -> None:
    """Rank the indexed corpus for each query and write the run (jsonl or TREC)."""
    from ragdiag.commands.retrieve import RetrieveRequest
    from ragdiag.commands.retrieve import run as run_retrieve

    request = RetrieveRequest(index_dir, queries, out, k, mode.value, rrf_k, candidates, cache_dir, base_url,
                              fmt=run_format.value, tag=tag, device=device.value, batch_size=batch_size,
                              backend=backend, cache_mode=cache.value, progress=True,
                              reading=o.reading_of(fields, id_field, query_field=query_field, queries=queries_format))
    result = run_retrieve(request)
    typer.echo(f"wrote {result.n_queries} rankings ({mode.value}, k={k}) to {out} in {result.seconds:.2f}s")
