"""BM25 retrieval with rank-bm25's BM25Okapi (Robertson & Zaragoza 2009; k1=1.5, b=0.75).

Tokenisation: Unicode NFKC normalisation, case folding, optional accent folding (NFD, drop
combining marks), word tokens (``\\w+``, so French elisions such as "l'" split off), and
a small stopword list for ``en`` or ``fr``.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ragdiag.errors import RagdiagError

_TOKEN = re.compile(r"\w+")
STOPWORDS = {
    "en": frozenset(
        "a an and are as at be but by for from has have he her his i in is it its of on or she that the their "
        "them they this to was were what when where which who will with".split()
    ),
    "fr": frozenset(
        "a à au aux avec ce ces c d dans de des du elle en et est il ils j je l la le les leur lui m ma mais me "
        "n ne nous on ou où par pas pour qu que qui s sa se ses son sur t ta te tes toi ton tu un une vous y".split()
    ),
}


def fold_accents(text: str) -> str:
    """Drop combining marks after canonical decomposition ("é" → "e")."""
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)))


def tokenize(text: str, lang: str = "en", accents: bool = False) -> list[str]:
    """Tokens for BM25: NFKC, casefold, optional accent folding, ``\\w+``, minus stopwords."""
    if lang not in STOPWORDS:
        raise RagdiagError(f"unknown BM25 language '{lang}': expected en or fr")
    text = unicodedata.normalize("NFKC", text).casefold()
    if accents:
        text = fold_accents(text)
    stop = STOPWORDS[lang] if not accents else {fold_accents(w) for w in STOPWORDS[lang]}
    return [t for t in _TOKEN.findall(text) if t not in stop]


class BM25Index:
    """A rank-bm25 BM25Okapi over tokenised passages, with its tokeniser settings."""

    def __init__(self, texts: list[str], lang: str = "en", accents: bool = False) -> None:
        from rank_bm25 import BM25Okapi

        if not texts:
            raise RagdiagError("BM25: empty corpus")
        self.lang, self.accents = lang, accents
        tokens = [tokenize(t, lang, accents) for t in texts]
        self.n_docs = len(tokens)
        self._bm25 = BM25Okapi(tokens)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for one query."""
        return np.asarray(self._bm25.get_scores(tokenize(query, self.lang, self.accents)), dtype=np.float64)

    def top_k(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of the ``k`` best passages, best first (ties by position)."""
        return top_k_from_scores(self.scores(query), k)


def top_k_from_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest scores (descending, ties broken by lower position) and their positions."""
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    order = np.lexsort((part, -scores[part]))
    best = part[order]
    return best, scores[best]
