"""The passages a synthetic test set is written from: every document cut into windows of at most
``max_words`` words, those of at least ``min_words`` kept, then a seeded sample stratified over
documents (documents in a seeded random order, at most ``per_doc`` windows from each, until ``n``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ragdiag.errors import RagdiagError

__all__ = ["Passage", "sample_passages"]


@dataclass(frozen=True)
class Passage:
    """One window of a document: its words ``start`` … ``start + len``; ``lang`` en or fr; ``kind``
    the query kind asked for it."""

    doc_id: str
    start: int
    text: str
    lang: str
    kind: str

    @property
    def key(self) -> str:
        return f"{self.doc_id}@{self.start}"


def _windows(text: str, min_words: int, max_words: int) -> list[tuple[int, str]]:
    words = text.split()
    return [(start, " ".join(words[start:start + max_words])) for start in range(0, len(words), max_words)
            if len(words[start:start + max_words]) >= min_words]


def sample_passages(doc_ids: list[str], doc_texts: list[str], n: int, per_doc: int, min_words: int, max_words: int,
                    seed: int, lang: str, kinds: list[str], source: str) -> list[Passage]:
    """``n`` passages, seeded, stratified over documents; refuses an empty corpus, a corpus with no
    window of ``min_words`` words, and an ``n`` above the windows the sample may take."""
    from ragdiag.llm.language import choose_lang

    if not doc_ids:
        raise RagdiagError(f"--corpus {source}: empty (no documents)")
    rng = random.Random(seed)
    order = list(range(len(doc_ids)))
    rng.shuffle(order)
    chosen: list[tuple[str, int, str]] = []
    available = 0
    for i in order:
        windows = _windows(doc_texts[i], min_words, max_words)
        rng.shuffle(windows)
        available += min(per_doc, len(windows))
        chosen += [(doc_ids[i], start, text) for start, text in windows[:per_doc]]
    if available == 0:
        longest = max(len(t.split()) for t in doc_texts)
        raise RagdiagError(f"--corpus {source}: every passage is shorter than --min-words {min_words} (the longest "
                           f"document has {longest} words); lower --min-words")
    if n > available:
        raise RagdiagError(f"--n {n} is larger than the passages available in {source}: {available} (at most --per-doc "
                           f"{per_doc} per document, {min_words}–{max_words} words); lower --n or raise --per-doc")
    return [Passage(doc, start, text, choose_lang(lang, text), kinds[k % len(kinds)])
            for k, (doc, start, text) in enumerate(chosen[:n])]
