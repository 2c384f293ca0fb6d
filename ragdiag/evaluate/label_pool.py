"""Candidate pools for ``ragdiag label`` (paper 001, rag-gs stages S2–S3): the top ``depth`` of each
listed retriever, fused by reciprocal rank fusion (c = 60, Cormack et al. 2009).

Pool sources, comma-separated in ``--pool``:

* ``dense:EMBEDDER`` — the shared retrieval core: the embedder (``local``, ``st:NAME``,
  ``openai:MODEL``, ``voyage:MODEL``; cached vectors), an exact faiss flat index, cosine;
* ``bm25`` or ``bm25:SPEC`` — the core's BM25 (bm25s; ``SPEC`` as ``ragdiag index build --bm25``);
* ``run:PATH`` — an existing run file (ragdiag ``run.jsonl`` or TREC), e.g. a production retriever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.fusion import reciprocal_rank_fusion

RRF_C = 60


@dataclass(frozen=True)
class PoolSource:
    """One retriever of the pool: kind ``dense`` / ``bm25`` / ``run`` and its argument."""

    kind: str
    arg: str = ""

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind


def parse_pool(spec: str) -> list[PoolSource]:
    """``"dense:local,bm25"`` → sources; unknown kinds and repeats are one-line errors."""
    sources: list[PoolSource] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        kind, _, arg = part.partition(":")
        if kind == "dense":
            source = PoolSource("dense", arg or "local")
        elif kind == "bm25":
            source = PoolSource("bm25", arg)
        elif kind == "run" and arg:
            source = PoolSource("run", arg)
        else:
            raise RagdiagError(f"--pool '{part}': expected dense:EMBEDDER, bm25[:SPEC] or run:PATH")
        if source in sources:
            raise RagdiagError(f"--pool lists '{source.name}' twice")
        sources.append(source)
    if not sources:
        raise RagdiagError("--pool is empty: expected e.g. dense:local,bm25")
    return sources


def _dense(source: PoolSource, doc_texts: list[str], query_texts: list[str], depth: int,
           cache_dir: Path | None, progress: bool) -> list[list[int]]:
    from ragdiag.retrieval.embedders import load_embedder
    from ragdiag.retrieval.index_specs import parse_index_spec
    from ragdiag.retrieval.indexes import build_index, search

    passages = load_embedder(source.arg, cache_dir, role="passage").encode(doc_texts, progress=progress)
    queries = load_embedder(source.arg, cache_dir, role="query").encode(query_texts, progress=progress)
    index = build_index(parse_index_spec("flat"), passages, "cosine")
    _, rows = search(index, queries, min(depth, len(doc_texts)))
    return [[int(r) for r in row if r >= 0] for row in rows]


def _bm25(source: PoolSource, doc_texts: list[str], query_texts: list[str], depth: int) -> list[list[int]]:
    from ragdiag.retrieval.bm25 import BM25Index, parse_bm25_spec

    config = parse_bm25_spec(f"bm25:{source.arg}") if source.arg else None
    index = BM25Index.build(doc_texts, config)
    return [[int(r) for r in index.top_k(text, depth)[0]] for text in query_texts]


def _run(source: PoolSource, doc_ids: list[str], query_ids: list[str], depth: int) -> list[list[int]]:
    from ragdiag.data.qrels_runs import read_run

    run = read_run(source.arg)
    row_of = {d: i for i, d in enumerate(doc_ids)}
    lists = []
    for query_id in query_ids:
        ranked = [doc for doc, _ in run.get(query_id, [])][:depth]
        unknown = [doc for doc in ranked if doc not in row_of]
        if unknown:
            raise RagdiagError(f"{source.arg}: query '{query_id}' ranks '{unknown[0]}', which is not in the corpus")
        lists.append([row_of[doc] for doc in ranked])
    return lists


def build_pools(sources: Sequence[PoolSource], doc_ids: list[str], doc_texts: list[str], query_ids: list[str],
                query_texts: list[str], depth: int, cache_dir: Path | None = None,
                progress: bool = False) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """Per query: the fused pool (doc ids in RRF order) and each source's own top-``depth`` list."""
    per_source: dict[str, list[list[str]]] = {}
    for source in sources:
        if source.kind == "dense":
            rows = _dense(source, doc_texts, query_texts, depth, cache_dir, progress)
        elif source.kind == "bm25":
            rows = _bm25(source, doc_texts, query_texts, depth)
        else:
            rows = _run(source, doc_ids, query_ids, depth)
        per_source[source.name] = [[doc_ids[r] for r in row] for row in rows]
    fused = []
    for q in range(len(query_ids)):
        lists = [per_source[s.name][q] for s in sources]
        fused.append([doc for doc, _ in reciprocal_rank_fusion(lists, k=RRF_C)])
    return fused, per_source
