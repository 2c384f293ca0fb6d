"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

RRF(d) = Σ_lists 1 / (k + rank_list(d)), ranks starting at 1, k = 60 by default; documents
missing from a list contribute nothing for it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Doc = TypeVar("Doc", bound=Hashable)  # a document id: the fused list holds the ids the rankings hold


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Doc]], k: int = 60, top: int | None = None
) -> list[tuple[Doc, float]]:
    """Fused (id, score) pairs, best first; ties keep first-seen order."""
    if k < 0:
        raise ValueError("RRF k must be non-negative")
    fused: dict[Doc, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    ordered = sorted(fused.items(), key=lambda item: -item[1])
    return ordered[:top] if top is not None else ordered
