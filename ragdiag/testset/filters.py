"""The filters of ``ragdiag testset`` that cost no LLM call, each a pure function of the candidates:

- **copy**: share of the question's word n-grams found in its passage (lower-cased ``\\w+`` words);
  above ``copy_max`` the question copies the passage, the lexical bias that favours BM25.
- **consistency**: the source document must be in the top ``k`` of a retriever (BM25, or a dense
  index) for the question (Promptagator's round-trip filter, Dai et al. 2022).
- **dedupe**: a question whose cosine similarity to an earlier kept-so-far question is above
  ``threshold``, over the questions' embeddings when an embedder is given, else over TF-IDF vectors
  of character 3-grams (a cheap stand-in for embedding cosine: no model to load; it catches reworded
  copies that share most of their characters, not paraphrases).
- **language**: the question's detected language must be its passage's (always on).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["copy_scores", "duplicate_of", "language_ok", "round_trip_ranks"]

_WORD = re.compile(r"\w+")


def _ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def copy_score(question: str, passage: str, n: int) -> float:
    """Share of the question's word n-grams that occur in the passage (0 for a question under n words)."""
    q, p = _WORD.findall(question.lower()), _WORD.findall(passage.lower())
    grams = _ngrams(q, n)
    if not grams:
        return 0.0
    found = set(_ngrams(p, n))
    return sum(g in found for g in grams) / len(grams)


def copy_scores(questions: Sequence[str], passages: Sequence[str], n: int) -> list[float]:
    return [copy_score(q, p, n) for q, p in zip(questions, passages, strict=True)]


def round_trip_ranks(questions: Sequence[str], sources: Sequence[str], search: Callable[[str], list[str]]) -> list[int | None]:
    """1-based rank of each question's source document in ``search(question)`` (None: not returned)."""
    ranks: list[int | None] = []
    for question, source in zip(questions, sources, strict=True):
        found = search(question)
        ranks.append(found.index(source) + 1 if source in found else None)
    return ranks


def _char_tfidf(texts: Sequence[str]) -> np.ndarray:
    """Cosine similarities of the texts' L2-normalised TF-IDF vectors over character 3-grams of the
    lower-cased, space-joined words (idf = ln((1 + N)/(1 + df)) + 1, as scikit-learn's smooth idf)."""
    from scipy.sparse import csr_matrix

    grams = [Counter(t[i:i + 3] for i in range(max(1, len(t) - 2)))
             for t in (" " + " ".join(_WORD.findall(x.lower())) + " " for x in texts)]
    vocab: dict[str, int] = {}
    rows, cols, values = [], [], []
    for i, counts in enumerate(grams):
        for g, c in counts.items():
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
            values.append(float(c))
    df = Counter(g for c in grams for g in c)
    idf = np.zeros(len(vocab))
    for g, j in vocab.items():
        idf[j] = math.log((1 + len(texts)) / (1 + df[g])) + 1
    matrix = csr_matrix((np.asarray(values) * idf[cols], (rows, cols)), shape=(len(texts), len(vocab)))
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1))).ravel()
    norms[norms == 0] = 1.0
    scaled = csr_matrix(matrix.multiply(1.0 / norms[:, None]))
    return np.asarray((scaled @ scaled.T).todense())


def duplicate_of(questions: Sequence[str], threshold: float, vectors: np.ndarray | None = None) -> list[tuple[int, float] | None]:
    """For each question, (the earlier question it near-duplicates, cosine) when the cosine of their
    character 3-gram TF-IDF vectors (or of their ``vectors``, e.g. embeddings) is at least
    ``threshold``; None for the first of its kind."""
    if not questions:
        return []
    if vectors is None:
        similarity = _char_tfidf(questions)
    else:
        unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        similarity = unit @ unit.T
    found: list[tuple[int, float] | None] = []
    kept: list[int] = []
    for i in range(len(questions)):
        best = max(kept, key=lambda j: similarity[i, j], default=None)
        if best is not None and similarity[i, best] >= threshold:
            found.append((best, float(similarity[i, best])))
        else:
            found.append(None)
            kept.append(i)
    return found


def language_ok(question: str, lang: str) -> bool:
    """The question's detected language (French and English function words) is ``lang``."""
    from ragdiag.llm.language import detect

    return detect(question).lang == lang
