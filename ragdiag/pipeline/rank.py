"""Rank the candidates of texts samples by cosine similarity with an embedder (the retrieval core).

Candidates are ``p + n`` (index i < Np is positive i, else negative i − Np); the ranking is the
candidate indices by decreasing cosine to the query (ties: lower index first), and P, R at each
cut-off K are n/K and n/Np (METHODS.md §1–2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.errors import RagdiagError

# Short embedder codes for the ranked samples' ``E`` (the bundled sample uses L6 for ``local``).
EMBEDDER_CODES = {"local": "L6"}


def rank_texts(samples: list[TextsSample], embedder_spec: str, ks: list[int], cache_dir: Path | None = None,
               progress: bool = True) -> list[RankedSample]:
    """One ranked sample per texts sample; ``E`` is the embedder's short code (``local`` → L6) or its spec."""
    from ragdiag.retrieval.embedders import load_embedder

    for sample in samples:
        if not sample.p:
            raise RagdiagError(f"texts sample '{sample.id}' has no positives: it cannot be ranked")
    embedder = load_embedder(embedder_spec, cache_dir=cache_dir)
    texts = [t for s in samples for t in (s.q, *s.p, *s.n)]
    vectors = embedder.encode(texts, progress=progress)
    ranked, offset = [], 0
    for s in samples:
        nc = len(s.p) + len(s.n)
        query, candidates = vectors[offset], vectors[offset + 1 : offset + 1 + nc]
        offset += 1 + nc
        order = np.argsort(-(candidates @ query), kind="stable").tolist()
        hits = np.cumsum(np.asarray(order) < len(s.p))
        cutoffs = sorted(k for k in set(ks) if k <= nc)
        p_at = [float(hits[k - 1]) / k for k in cutoffs]
        r_at = [float(hits[k - 1]) / len(s.p) for k in cutoffs]
        ranked.append(RankedSample(s.id, EMBEDDER_CODES.get(embedder_spec, embedder_spec), nc, len(s.p), cutoffs, p_at, r_at, order))
    return ranked
