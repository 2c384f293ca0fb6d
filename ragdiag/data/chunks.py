"""Cut texts into passages: windows of ``ChunkSpec.tokens`` tokens, each starting ``tokens − overlap``
tokens after the previous one, cut from the original text by character offsets (never re-decoded);
a text that fits one window stays one passage. Tokens are a fast tokenizer's (``offset_mapping``) or
whitespace-separated words (:class:`WordTokenizer`). Used by ``index build --chunk`` and for a folder
of documents as a corpus (:mod:`ragdiag.data.doc_folder`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChunkSpec:
    tokens: int
    overlap: int = 0

    @property
    def text(self) -> str:
        return f"{self.tokens}:{self.overlap}"


class WordTokenizer:
    """Whitespace-separated words as tokens, in the fast tokenizers' call shape (``offset_mapping``):
    how a folder of documents is cut without an embedder's tokenizer (``index build --embedder none``, and
    every other command that takes the folder as a corpus)."""

    def __call__(self, texts: list[str], **_: object) -> dict[str, list[list[tuple[int, int]]]]:
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
