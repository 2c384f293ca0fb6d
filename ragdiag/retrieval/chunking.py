"""Split long documents into passages for dense indexing, and pool passage hits back to documents.

``--chunk TOKENS[:OVERLAP]``: windows of ``TOKENS`` tokenizer tokens (the embedder's own
tokenizer, special tokens not counted), each starting ``TOKENS − OVERLAP`` tokens after the
previous one, cut from the original text by character offsets (the text is never re-decoded). A
document that fits in one window stays one passage. At retrieval a document scores the best of its
passages (max-pooling; Dai & Callan 2019's FirstP/MaxP, "MaxP"), so runs stay per document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragdiag.errors import RagdiagError


@dataclass(frozen=True)
class ChunkSpec:
    tokens: int
    overlap: int = 0

    @property
    def text(self) -> str:
        return f"{self.tokens}:{self.overlap}"


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


class WordTokenizer:
    """Whitespace-separated words as tokens, in the fast tokenizers' call shape (``offset_mapping``):
    how a folder of documents is cut when the index has no embedder (``--embedder none``)."""

    def __call__(self, texts: list[str], **_: object) -> dict[str, list[list[tuple[int, int]]]]:
        import re

        return {"offset_mapping": [[m.span() for m in re.finditer(r"\S+", text)] for text in texts]}


def split_documents(texts: list[str], tokenizer, spec: ChunkSpec) -> tuple[list[str], np.ndarray]:
    """(passages, passage → document position). Uses the fast tokenizer's offset mapping."""
    encoded = tokenizer(texts, add_special_tokens=False, truncation=False, return_offsets_mapping=True, verbose=False)
    passages: list[str] = []
    owners: list[int] = []
    step = spec.tokens - spec.overlap
    for position, (text, offsets) in enumerate(zip(texts, encoded["offset_mapping"])):
        if len(offsets) <= spec.tokens:
            passages.append(text)
            owners.append(position)
            continue
        for start in range(0, len(offsets), step):
            window = offsets[start : start + spec.tokens]
            passages.append(text[window[0][0] : window[-1][1]])
            owners.append(position)
            if start + spec.tokens >= len(offsets):
                break
    return passages, np.asarray(owners, dtype=np.int64)


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
