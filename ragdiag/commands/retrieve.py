"""``ragdiag retrieve`` (also ``ragdiag index search``): top-k passages per query from an index folder.

:func:`run` checks the options, the run file and its ``.meta.json`` (never over the queries or an index
file) and reads every index file the mode needs before any embedding call; it ranks
(:func:`ragdiag.retrieval.search.rank`), then writes the run (jsonl or TREC) and its meta, stamped with
the run record, through :mod:`ragdiag.io.writer`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ragdiag import __version__
from ragdiag.data.beir import load_queries
from ragdiag.data.qrels_runs import check_ids_fit, run_file_text
from ragdiag.io.files import file_sha256
from ragdiag.io.paths import check_paths
from ragdiag.io.progress import step
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_path, guard_outputs, write_json, write_text
from ragdiag.results.retrieve import RetrieveResult
from ragdiag.retrieval.search import RetrieveOptions, check_options, open_checked, rank

__all__ = ["RetrieveRequest", "RetrieveResult", "run"]


@dataclass
class RetrieveRequest(RetrieveOptions):
    """Every option of ``ragdiag retrieve`` (``out`` is the run file, ``fmt`` its layout)."""

    progress: bool = False


def meta_path(out: Path) -> Path:
    return out.with_name(f"{out.name}.meta.json")


def run(request: RetrieveRequest) -> RetrieveResult:
    """Check, rank, write the run and its meta; the meta."""
    check_paths(inputs={"--index-dir": request.index, "--queries": request.queries}, outputs={"--out": request.out},
                folders={"--cache-dir": request.cache_dir})
    check_options(request)
    out = check_output_path(request.out, "run file")
    index_files = [p for p in Path(request.index).rglob("*") if p.is_file()] if Path(request.index).is_dir() else []
    guard_outputs([out, meta_path(out)], [request.queries, *index_files])
    store = open_checked(request, request.progress)
    record = start_run("ragdiag retrieve", inputs=[request.queries, request.index / "manifest.json"],
                       models={"embedder": store.manifest["meta"].get("embedder")})
    with step(f"reading the questions {request.queries}", request.progress):
        query_ids, texts = load_queries(request.queries, request.reading)
    if request.fmt == "trec":  # before any embedding call, not when the run is written
        check_ids_fit("trec", [(f"query id in {request.queries}", query_ids),
                               (f"document id in {request.index}", store.doc_ids)], "use the jsonl format")
    start = time.perf_counter()
    ranked, depth = rank(store, request, texts, request.progress)
    elapsed = time.perf_counter() - start
    write_text(out, run_file_text(dict(zip(query_ids, ranked)), fmt=request.fmt, tag=request.tag),
               inputs=[request.queries])
    meta = {
        "command": "ragdiag retrieve",
        "ragdiag_version": __version__,
        "index": str(request.index),
        "index_meta": store.manifest["meta"],
        "queries": str(request.queries),
        "queries_sha256": file_sha256(request.queries),
        "mode": request.mode,
        "k": request.k,
        "rrf_k": request.rrf_k if request.mode == "hybrid" else None,
        "candidates": depth if request.mode == "hybrid" else None,
        "n_queries": len(query_ids),
        "seconds": elapsed,
        "format": request.fmt,
        "short_lists": sum(len(pairs) < request.k for pairs in ranked),
    }
    doc = stamp({"meta": meta}, record)
    write_json(meta_path(out), doc, indent=2)
    return RetrieveResult(meta, doc["run_record"], out)
