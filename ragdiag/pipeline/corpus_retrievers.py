"""Retriever specs for ``pipeline --corpus``, run through the shared retrieval core.

- ``dense:EMBEDDER[:INDEX_SPEC]`` — EMBEDDER as in :func:`ragdiag.retrieval.embedders.load_embedder`
  (``local``, ``st:NAME``, ``openai:MODEL``, ``voyage:MODEL``), INDEX_SPEC as in
  :mod:`ragdiag.retrieval.index_specs` with one operating point (default ``flat``); cosine similarity.
- ``bm25[:VARIANT[:k1=..,b=..]]`` — :class:`ragdiag.retrieval.bm25.BM25Index` (bm25s; Lucene variant
  by default, English tokeniser), spec as :func:`ragdiag.retrieval.bm25.parse_bm25_spec`; a list
  may be shorter than the depth (only passages sharing a term with the query are hits, never padded).
- ``hybrid:A+B`` — reciprocal rank fusion (:func:`ragdiag.retrieval.fusion.reciprocal_rank_fusion`,
  k = 60) of two specs, each ranked to depth max(100, depth).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.io.progress import progress_reporter, step
from ragdiag.retrieval.index_specs import IndexSpec, parse_index_spec

if TYPE_CHECKING:
    from ragdiag.retrieval.bm25 import Bm25Config

RRF_K = 60
HYBRID_DEPTH = 100


@dataclass(frozen=True)
class RetrieverSpec:
    text: str
    kind: str  # dense | bm25 | hybrid
    embedder: str = ""
    index: IndexSpec | None = None
    bm25: Bm25Config | None = None
    parts: tuple[RetrieverSpec, ...] = ()


def _is_index_kind(part: str) -> bool:
    """True when ``part`` starts an index spec (its kind alone parses, e.g. ``hnsw`` in ``hnsw:M=16``)."""
    try:
        parse_index_spec(part)
    except RagdiagError:
        return False
    return True


def parse_retriever(text: str) -> RetrieverSpec:
    """Parse one ``--retriever`` value (malformed → one-line RagdiagError naming the spec)."""
    spec = text.strip()
    kind, _, rest = spec.partition(":")
    if kind == "bm25":
        from ragdiag.retrieval.bm25 import parse_bm25_spec

        try:
            config = parse_bm25_spec(spec)
        except RagdiagError as err:
            raise RagdiagError(f"retriever '{text}': {err}") from None
        return RetrieverSpec(spec, "bm25", bm25=config)
    if kind == "dense":
        fields = rest.split(":")
        at = next((i for i, p in enumerate(fields) if i > 0 and _is_index_kind(p)), len(fields))
        embedder, index_text = ":".join(fields[:at]), ":".join(fields[at:]) or "flat"
        if not embedder:
            raise RagdiagError(f"retriever '{text}': expected dense:EMBEDDER[:INDEX_SPEC], e.g. dense:local:hnsw:M=16,efSearch=32")
        try:
            index = parse_index_spec(index_text)
        except RagdiagError as err:
            raise RagdiagError(f"retriever '{text}': {err}") from None
        if len(index.operating_points()) != 1:
            raise RagdiagError(f"retriever '{text}': one operating point per retriever (use 'ragdiag sweep' to sweep a|b|c)")
        return RetrieverSpec(spec, "dense", embedder=embedder, index=index)
    if kind == "hybrid":
        halves = rest.split("+")
        if len(halves) != 2 or not all(h.strip() for h in halves):
            raise RagdiagError(f"retriever '{text}': expected hybrid:A+B with two retrievers, e.g. hybrid:dense:local+bm25")
        parts = tuple(parse_retriever(h) for h in halves)
        if any(p.kind == "hybrid" for p in parts):
            raise RagdiagError(f"retriever '{text}': a hybrid cannot contain another hybrid")
        return RetrieverSpec(spec, "hybrid", parts=parts)
    raise RagdiagError(f"retriever '{text}': unknown kind '{kind}' (expected dense:EMBEDDER[:INDEX_SPEC], bm25 or hybrid:A+B)")


class CorpusRetrieval:
    """Ranks one corpus for a list of queries; embedders and indexes are built once and reused."""

    def __init__(self, doc_texts: list[str], query_texts: list[str], cache_dir: Path | None = None,
                 embed_base_url: str | None = None, seed: int = 0, progress: bool = False) -> None:
        self.doc_texts, self.query_texts = doc_texts, query_texts
        self.cache_dir, self.embed_base_url, self.seed, self.progress = cache_dir, embed_base_url, seed, progress
        self._vectors: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.identities: dict[str, str] = {}

    def _dense_vectors(self, embedder_spec: str) -> tuple[np.ndarray, np.ndarray]:
        if embedder_spec not in self._vectors:
            from ragdiag.retrieval.embedders import load_embedder
            from ragdiag.retrieval.indexes import prepare_vectors

            embedder = load_embedder(embedder_spec, self.cache_dir, base_url=self.embed_base_url)
            docs = prepare_vectors(embedder.encode(self.doc_texts, progress=self.progress), "cosine", "corpus embeddings")
            queries = prepare_vectors(embedder.encode(self.query_texts, progress=self.progress), "cosine", "query embeddings")
            self._vectors[embedder_spec] = (docs, queries)
            self.identities[embedder_spec] = embedder.identity
        return self._vectors[embedder_spec]

    def rank(self, spec: RetrieverSpec, depth: int) -> list[list[tuple[int, float]]]:
        """Per query, the top ``depth`` (corpus row, score) pairs, best first."""
        if depth > len(self.doc_texts):
            raise RagdiagError(f"retriever '{spec.text}': depth {depth} is larger than the {len(self.doc_texts)} passages")
        if spec.kind == "dense":
            from ragdiag.retrieval.indexes import build_index, search, set_search_params

            if spec.index is None:
                raise RagdiagError(f"retriever '{spec.text}': a dense retriever needs an index spec")
            docs, queries = self._dense_vectors(spec.embedder)
            with step(f"building the faiss index {spec.index.text} over {len(docs):,} passages", self.progress):
                index = build_index(spec.index, docs, "ip", seed=self.seed)
            set_search_params(index, spec.index.operating_points()[0], k=depth)
            scores, rows = search(index, queries, depth)
            return [[(int(r), float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows, scores)]
        if spec.kind == "bm25":
            from ragdiag.retrieval.bm25 import BM25Index

            with step(f"building the BM25 index over {len(self.doc_texts):,} passages", self.progress):
                bm25 = BM25Index.build(self.doc_texts, spec.bm25)
            out = []
            with progress_reporter("BM25 search", len(self.query_texts), enabled=self.progress) as bar:
                for text in self.query_texts:
                    rows, scores = bm25.top_k(text, depth)
                    out.append([(int(r), float(s)) for r, s in zip(rows, scores)])
                    bar.advance()
            return out
        from ragdiag.retrieval.fusion import reciprocal_rank_fusion

        wide = min(max(HYBRID_DEPTH, depth), len(self.doc_texts))
        lists = [self.rank(part, wide) for part in spec.parts]
        return [[(int(d), float(s)) for d, s in reciprocal_rank_fusion([[r for r, _ in a], [r for r, _ in b]], k=RRF_K, top=depth)]
                for a, b in zip(*lists)]
