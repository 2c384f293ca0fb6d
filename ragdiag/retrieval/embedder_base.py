"""The embedder base class: ``encode(texts)`` through the embedding cache, in batches, with stats.

Subclasses (:mod:`ragdiag.retrieval.embedders` for sentence-transformers,
:mod:`ragdiag.retrieval.api_embedders` for HTTP APIs) implement ``_embed_batch`` and say what
changes their vectors in ``cache_params`` / ``cache_identity``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.remote.embedding_cache import (
    CACHE_FILE,
    EmbeddingCache,
    VectorKeys,
    text_key,
)
from ragdiag.remote.store import CACHE_MODES


@dataclass
class EmbedStats:
    """Counts for one embedder's lifetime: texts asked for, cache hits, model calls."""

    texts: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    embedded: int = 0
    retries: int = 0


class Embedder:
    """Base class: ``encode(texts)`` returns L2-normalised float32 vectors, cached on disk.

    Cache modes as for LLM calls: ``rw`` (read and write), ``replay`` (cache only; a miss is an
    error and nothing is embedded), ``off`` (no cache file at all), ``refresh`` (re-embed every
    text once per embedder, overwriting the cached vector). ``use_cache=False`` means ``off``.
    """

    identity: str  # readable model identity, e.g. "st:all-MiniLM-L6-v2" (written to outputs; no credentials)

    def __init__(self, cache_dir: Path | None = None, use_cache: bool = True, batch_size: int = 128,
                 cache_mode: str | None = None):
        self.batch_size = batch_size
        self.stats = EmbedStats()
        self.cache_mode = cache_mode or ("rw" if use_cache else "off")
        if self.cache_mode not in CACHE_MODES:
            raise RagdiagError(f"embedding cache mode must be one of {', '.join(CACHE_MODES)}, got '{self.cache_mode}'")
        self._cache = None if self.cache_mode == "off" else EmbeddingCache(resolve_cache_dir(cache_dir) / CACHE_FILE)
        self._keys: VectorKeys | None = None
        self._fresh: set[str] = set()

    def set_cache_mode(self, mode: str) -> None:
        """Switch between the modes that read or write the cache (``off`` is chosen at construction)."""
        if mode not in CACHE_MODES or (mode == "off") != (self._cache is None):
            raise RagdiagError(f"cannot switch the embedding cache from {self.cache_mode} to {mode}")
        self.cache_mode = mode

    def cache_params(self) -> dict[str, Any]:
        """Settings that change the vectors (subclasses add theirs: prefixes, dimensions, input type ...)."""
        return {}

    def cache_identity(self) -> dict[str, Any]:
        """Everything that changes this embedder's vectors; hashed into every cache key."""
        return {"model": self.identity, "params": self.cache_params()}

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _vector_keys(self) -> VectorKeys:
        if self._keys is None:
            assert self._cache is not None
            self._keys = self._cache.register(self.cache_identity(), self.identity)
        return self._keys

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """Vectors for ``texts`` (n × dim, unit norm); texts already cached are not re-embedded."""
        self.stats.texts += len(texts)
        hashes = [text_key(t) for t in texts]
        if self._cache is None:
            keys, cached = hashes, {}
        else:
            maker = self._vector_keys()
            keys = [maker.key(h) for h in hashes]
            readable = set(keys) if self.cache_mode != "refresh" else set(keys) & self._fresh
            cached = self._cache.get_many(list(readable))
        self.stats.cache_hits += sum(1 for k in keys if k in cached)
        missing: dict[str, tuple[str, str]] = {}
        for key, digest, text in zip(keys, hashes, texts):
            if key not in cached and key not in missing:
                missing[key] = (digest, text)
        if missing and self.cache_mode == "replay":
            raise RagdiagError(
                f"--cache replay: {len(missing)} of {len(set(keys))} distinct texts have no cached vector for "
                f"{self.identity} in {self._cache.path if self._cache else 'the cache'}; run with --cache rw to embed them")
        if missing:
            new_keys = list(missing)
            vectors = self._embed_all(new_keys, [missing[k][0] for k in new_keys], [missing[k][1] for k in new_keys],
                                      progress)
            cached.update(zip(new_keys, vectors))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([cached[k] for k in keys]).astype(np.float32, copy=False)

    def _embed_all(self, keys: list[str], hashes: list[str], texts: list[str], progress: bool) -> np.ndarray:
        """Embed in batches of similar length (longest first, as sentence-transformers orders one call,
        so little padding is computed); each batch goes to the cache at once, so an interrupted run
        resumes. Vectors come back in the order of ``texts``. Under ``--engine ray`` the same batches
        run on Ray workers (:mod:`ragdiag.retrieval.ray_embed`); this process still writes the cache."""
        from ragdiag.engine.settings import active
        from ragdiag.io.progress import progress_reporter

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[start : start + self.batch_size] for start in range(0, len(texts), self.batch_size)]
        out = np.zeros((0, 0), dtype=np.float32)
        ray = active().is_ray
        label = f"embedding with {self.identity}"
        if ray:
            from ragdiag.retrieval.ray_embed import pool_size

            label += f" on Ray ({pool_size(active().ray_workers, len(batches))} workers)"
        with progress_reporter(label, len(texts), enabled=progress) as bar:
            def store(rows: list[int], raw: np.ndarray) -> None:
                nonlocal out
                vectors = _normalise(np.asarray(raw, dtype=np.float32))
                if self._cache is not None:
                    self._cache.put_many(self._vector_keys(), [hashes[i] for i in rows], vectors,
                                         replace=self.cache_mode == "refresh")
                    self._fresh.update(keys[i] for i in rows)
                if out.size == 0:
                    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                out[rows] = vectors
                self.stats.model_calls += 1
                self.stats.embedded += len(rows)
                bar.advance(len(rows))

            if ray:
                from ragdiag.retrieval.ray_embed import embed_batches_on_ray

                embed_batches_on_ray(self, [[texts[i] for i in rows] for rows in batches], batches, store)
            else:
                for rows in batches:
                    store(rows, self._embed_batch([texts[i] for i in rows]))
        return out

    requires: tuple[str, ...] = ()  # modules a worker process needs to run ``_embed_batch``
    _loaded: tuple[str, ...] = ()  # attributes holding a loaded model or client (rebuilt in each worker)

    def for_worker(self) -> Embedder:
        """A copy to ship to a Ray worker: same settings, no cache (workers never write), nothing loaded."""
        clone = copy.copy(self)
        clone._cache, clone.cache_mode, clone._keys, clone._fresh, clone.stats = None, "off", None, set(), EmbedStats()
        for name in self._loaded:
            setattr(clone, name, None)
        return clone


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)
