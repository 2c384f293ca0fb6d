"""Split long documents into passages for dense indexing, and pool passage hits back to documents.

``--chunk TOKENS[:OVERLAP]``: windows of ``TOKENS`` tokenizer tokens (the embedder's own
tokenizer, special tokens not counted), each starting ``TOKENS − OVERLAP`` tokens after the
previous one, cut from the original text by character offsets (the text is never re-decoded). A
document that fits in one window stays one passage. At retrieval a document scores the best of its
passages (max-pooling; Dai & Callan 2019's FirstP/MaxP, "MaxP"), so runs stay per document. The cut
itself is :mod:`ragdiag.data.chunks` (a folder of documents is cut there for every command).
"""

from __future__ import annotations

import numpy as np

from ragdiag.data.chunks import ChunkSpec, WordTokenizer, split_documents
from ragdiag.errors import RagdiagError

__all__ = ["ChunkSpec", "WordTokenizer", "check_fits", "parse_chunk", "pool_max", "split_documents"]


def parse_chunk(spec: str) -> ChunkSpec:
    """``200`` or ``200:50`` → ChunkSpec; tokens in [8, 100000], 0 ≤ overlap < tokens."""
    tokens_text, _, overlap_text = spec.strip().partition(":")
    try:
        tokens, overlap = int(tokens_text), int(overlap_text or 0)
    except ValueError:
        raise RagdiagError(f"chunk '{spec}': expected TOKENS[:OVERLAP], two integers, e.g. 200:50") from None
    if not 8 <= tokens <= 100_000:
        raise RagdiagError(f"chunk '{spec}': TOKENS must be between 8 and 100000, got {tokens}")
    if not 0 <= overlap < tokens:
        raise RagdiagError(f"chunk '{spec}': OVERLAP must be ≥ 0 and smaller than TOKENS ({tokens}), got {overlap}")
    return ChunkSpec(tokens, overlap)


def check_fits(spec: ChunkSpec, window: int, prefix_tokens: int = 0, special_tokens: int = 2) -> None:
    """A chunk plus the prefix and the model's special tokens must fit the model window."""
    needed = spec.tokens + prefix_tokens + special_tokens
    if needed > window:
        raise RagdiagError(f"chunk of {spec.tokens} tokens does not fit the model window of {window} tokens "
                           f"({prefix_tokens} prefix + {special_tokens} special tokens also count); "
                           f"use at most {window - prefix_tokens - special_tokens}")


def pool_max(rows: np.ndarray, scores: np.ndarray, owners: np.ndarray, k: int) -> list[tuple[int, float]]:
    """First ``k`` distinct documents of one query's ranked passage list (rows best first, -1 = none):
    each document keeps its best passage's score."""
    seen: dict[int, float] = {}
    for row, score in zip(rows, scores):
        if row < 0:
            continue
        doc = int(owners[row])
        if doc not in seen:
            seen[doc] = float(score)
            if len(seen) == k:
                break
    return list(seen.items())
