"""BM25 on the ``bm25s`` engine (eager sparse scoring, Lù 2024), Lucene or Okapi variant.

Variants (spec ``[bm25:]VARIANT[:k1=..,b=..]``):

* ``lucene`` (default; k1 = 0.9, b = 0.4 as Anserini's BEIR baselines):
  ``score(q, d) = Σ_t∈q idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl))`` with
  ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`` (Lucene ≥ 8 BM25Similarity; Kamphuis et al.,
  ECIR 2020).
* ``okapi`` (k1 = 1.5, b = 0.75, ε = 0.25 — rank-bm25's ``BM25Okapi``, for parity with earlier
  results): ``tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl))`` times
  ``idf = ln((N − df + 0.5) / (df + 0.5))``, negative idfs replaced by ε · mean idf.

Tokenisation: Unicode NFKC, case folding, optional accent folding, word tokens (``\\w+``, so
French elisions such as "l'" split off), stopwords (Lucene's English set, Snowball's French
set, as shipped by bm25s), then Snowball stemming (PyStemmer) unless turned off.

Ranking: only documents with a positive score are ranked — a document sharing no term with the
query (or, under Okapi, only terms whose idf is ≤ 0) is never a hit, so a list may be shorter
than k; equal scores go to the lower corpus position.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.io.writer import PathLike, atomic_path, write_json, write_text

_TOKEN = re.compile(r"\w+")
LANGS = {"en": "english", "fr": "french"}
VARIANTS = {"lucene": {"k1": 0.9, "b": 0.4}, "okapi": {"k1": 1.5, "b": 0.75, "epsilon": 0.25}}


def fold_accents(text: str) -> str:
    """Drop combining marks after canonical decomposition ("é" → "e")."""
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)))


@dataclass(frozen=True)
class Bm25Config:
    """How a BM25 index scores and tokenises; stored in the index manifest."""

    variant: str = "lucene"
    k1: float = 0.9
    b: float = 0.4
    epsilon: float | None = None
    lang: str = "en"
    stem: bool = True
    accents: bool = False

    def to_json(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_json(cls, data: dict) -> Bm25Config:
        known = {k: data[k] for k in ("variant", "k1", "b", "epsilon", "lang", "stem", "accents") if k in data}
        return check_config(cls(**known))


def check_config(config: Bm25Config) -> Bm25Config:
    """Refuse unknown variants/languages and out-of-range k1, b, ε (before any work)."""
    if config.variant not in VARIANTS:
        raise RagdiagError(f"unknown BM25 variant '{config.variant}': expected lucene or okapi")
    if config.lang not in LANGS:
        raise RagdiagError(f"unknown BM25 language '{config.lang}': expected {' or '.join(LANGS)}")
    if not (math.isfinite(config.k1) and config.k1 >= 0):
        raise RagdiagError(f"BM25 k1 must be a finite number ≥ 0, got {config.k1}")
    if not (math.isfinite(config.b) and 0 <= config.b <= 1):
        raise RagdiagError(f"BM25 b must be between 0 and 1, got {config.b}")
    if config.epsilon is not None and not (math.isfinite(config.epsilon) and config.epsilon >= 0):
        raise RagdiagError(f"BM25 epsilon must be a finite number ≥ 0, got {config.epsilon}")
    if config.epsilon is not None and config.variant != "okapi":
        raise RagdiagError("BM25 epsilon applies to the okapi variant only")
    return config


def parse_bm25_spec(spec: str, lang: str = "en", stem: bool = True, accents: bool = False) -> Bm25Config:
    """``lucene``, ``bm25:okapi``, ``bm25:lucene:k1=1.2,b=0.75`` → a checked :class:`Bm25Config`."""
    parts = spec.strip().split(":", 2)
    if parts[0] == "bm25":
        parts = parts[1:] or ["lucene"]
    variant, params = parts[0], ":".join(parts[1:])
    if variant not in VARIANTS:
        raise RagdiagError(f"BM25 spec '{spec}': unknown variant '{variant}' (expected lucene or okapi)")
    values: dict[str, float] = dict(VARIANTS[variant])
    for item in filter(None, (p.strip() for p in params.split(","))):
        name, eq, raw = item.partition("=")
        if not eq or name.strip() not in VARIANTS[variant]:
            allowed = ", ".join(VARIANTS[variant])
            raise RagdiagError(f"BM25 spec '{spec}': expected name=value with name in {allowed}, got '{item}'")
        try:
            values[name.strip()] = float(raw)
        except ValueError:
            raise RagdiagError(f"BM25 spec '{spec}': {name.strip()}={raw!r} is not a number") from None
    return check_config(Bm25Config(variant=variant, lang=lang, stem=stem, accents=accents, **values))


class Tokenizer:
    """NFKC + casefold (+ accent folding) → ``\\w+`` tokens → minus stopwords → Snowball stems."""

    def __init__(self, lang: str = "en", stem: bool = True, accents: bool = False) -> None:
        if lang not in LANGS:
            raise RagdiagError(f"unknown BM25 language '{lang}': expected {' or '.join(LANGS)}")
        from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_FRENCH

        words = {"en": STOPWORDS_EN, "fr": STOPWORDS_FRENCH}[lang]
        self.accents = accents
        self.stopwords = frozenset(fold_accents(w) if accents else w for w in words)
        self._stemmer = require("Stemmer").Stemmer(LANGS[lang]) if stem else None

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text).casefold()
        if self.accents:
            text = fold_accents(text)
        tokens = [t for t in _TOKEN.findall(text) if t not in self.stopwords]
        return self._stemmer.stemWords(tokens) if self._stemmer is not None else tokens


def tokenize(text: str, lang: str = "en", accents: bool = False, stem: bool = True) -> list[str]:
    """Tokens of one text with the BM25 tokeniser (see :class:`Tokenizer`)."""
    return Tokenizer(lang, stem, accents)(text)


class BM25Index:
    """A bm25s index over tokenised passages, with its scoring and tokeniser settings."""

    def __init__(self, engine, config: Bm25Config) -> None:
        self.engine, self.config = engine, config
        self.n_docs = int(engine.scores["num_docs"])

    @classmethod
    def build(cls, texts: list[str], config: Bm25Config | None = None, source: str = "corpus") -> BM25Index:
        """Tokenise ``texts`` and build the score matrix (one column of precomputed scores per term)."""
        config = check_config(config or Bm25Config())
        bm25s = require("bm25s")
        if not texts:
            raise RagdiagError(f"{source}: no passages to index for BM25")
        tokenizer = Tokenizer(config.lang, config.stem, config.accents)
        tokens = [tokenizer(text) for text in texts]
        if not any(tokens):
            raise RagdiagError(f"{source}: every passage is empty or only stopwords after tokenisation; nothing for BM25 to index")
        if config.variant == "lucene":
            engine = bm25s.BM25(k1=config.k1, b=config.b, method="lucene", idf_method="lucene")
            engine.index(tokens, show_progress=False)
        else:
            engine = bm25s.BM25(k1=config.k1, b=config.b, method="atire", idf_method="lucene", dtype="float64")
            engine.index(tokens, show_progress=False)
            _reweight_okapi_idf(engine, config.epsilon if config.epsilon is not None else 0.25)
            config = replace(config, epsilon=config.epsilon if config.epsilon is not None else 0.25)
        return cls(engine, config)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self.config.lang, self.config.stem, self.config.accents)

    def _term_ids(self, query: str) -> np.ndarray:
        vocab = self.engine.vocab_dict
        return np.asarray([vocab[t] for t in self.tokenizer(query) if t and t in vocab], dtype=np.int64)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for one query (0 for passages sharing no term)."""
        ids = self._term_ids(query)
        if ids.size == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        return np.asarray(self.engine.get_scores_from_ids(ids), dtype=np.float64)

    def top_k(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of at most ``k`` passages with a positive score, best first, equal
        scores by lower position. Fewer than ``k`` when fewer passages score above 0."""
        scores = self.scores(query)
        rows = np.flatnonzero(scores > 0)
        best = top_k_from_scores(scores[rows], k)[0]
        return rows[best], scores[rows[best]]


def _reweight_okapi_idf(engine, epsilon: float) -> None:
    """Turn bm25s's (Lucene idf × ATIRE tf) columns into rank-bm25's BM25Okapi scores: each term
    column is rescaled by idf_okapi / idf_lucene, idf_okapi = ln((N − df + .5)/(df + .5)), negatives
    replaced by ε · (mean idf_okapi over the vocabulary), as ``rank_bm25.BM25Okapi._calc_idf``."""
    data, indptr = engine.scores["data"], engine.scores["indptr"]
    n = float(engine.scores["num_docs"])
    df = np.diff(indptr).astype(np.float64)
    present = df > 0
    okapi = np.zeros_like(df)
    okapi[present] = np.log(n - df[present] + 0.5) - np.log(df[present] + 0.5)
    floor = epsilon * okapi[present].mean()
    okapi[present & (okapi < 0)] = floor
    lucene = np.log1p((n - df + 0.5) / (df + 0.5))
    factor = np.where(present, okapi / lucene, 0.0)
    data *= np.repeat(factor, np.diff(indptr))


def top_k_from_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest scores (descending; equal scores by lower position) and their positions.

    Exact at the cut-off: every position tied with the k-th score is a candidate before the
    stable sort, so the lowest positions win the tie (``argpartition`` alone does not guarantee it).
    """
    scores = np.asarray(scores)
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), scores[:0]
    if k < len(scores):
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))[:k]
    best = candidates[order]
    return best, scores[best]


BM25_FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json", "params.index.json")


def save_bm25(index: BM25Index, folder: PathLike) -> None:
    """Write the index in bm25s's own layout (``.npy`` arrays without pickle, JSON vocab and
    params), each file atomically."""
    folder, engine = Path(folder), index.engine
    for name, key in zip(BM25_FILES[:3], ("data", "indices", "indptr")):
        with atomic_path(folder / name) as tmp, open(tmp, "wb") as handle:
            np.save(handle, np.asarray(engine.scores[key]), allow_pickle=False)
    write_text(folder / BM25_FILES[3], json.dumps(engine.vocab_dict, ensure_ascii=False))
    params = {"k1": engine.k1, "b": engine.b, "delta": engine.delta, "method": engine.method,
              "idf_method": engine.idf_method, "dtype": engine.dtype, "int_dtype": engine.int_dtype,
              "num_docs": int(engine.scores["num_docs"]), "version": require("bm25s").__version__,
              "backend": "numpy"}
    write_json(folder / BM25_FILES[4], params)


def load_bm25(folder: PathLike, config: Bm25Config) -> BM25Index:
    """Load a folder written by :func:`save_bm25` with ``allow_pickle=False`` (an array holding
    Python objects is refused, never unpickled); a missing or corrupt file → one line."""
    folder = Path(folder)
    for name in BM25_FILES:
        if not (folder / name).is_file():
            raise RagdiagError(f"index folder {folder.parent} is missing {folder.name}/{name}; rebuild it with 'ragdiag index build'")
    bm25s = require("bm25s")
    try:
        engine = bm25s.BM25.load(folder, allow_pickle=False, mmap=False, show_progress=False)
    except (ValueError, TypeError, KeyError, OSError) as err:
        raise RagdiagError(f"index folder {folder.parent}: BM25 files in {folder.name}/ are corrupt ({type(err).__name__}: {err}); rebuild the index") from None
    return BM25Index(engine, config)
