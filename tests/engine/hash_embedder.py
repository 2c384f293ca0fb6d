"""A torch-free embedder for the Ray engine tests: deterministic vectors from each text's sha256, and
a switch that makes the worker process die on a chosen batch (once, or every time)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from ragdiag.retrieval.embedder_base import Embedder

DIM = 16


class HashEmbedder(Embedder):
    """``test:hash``: vector = the first 16 bytes of sha256(text), centred. ``die_on`` = a text whose batch
    kills its process (``os._exit``): once (a marker file in ``die_dir`` records it) or always."""

    identity = "test:hash"
    requires = ("numpy",)

    def __init__(self, cache_dir: Path | None = None, batch_size: int = 8, die_on: str | None = None,
                 die_dir: Path | None = None, always: bool = False) -> None:
        super().__init__(cache_dir, use_cache=cache_dir is not None, batch_size=batch_size)
        self.die_on, self.die_dir, self.always = die_on, die_dir, always

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        if self.die_on is not None and self.die_on in texts:
            marker = Path(self.die_dir) / "died"
            if self.always or not marker.exists():
                marker.write_text("x")
                os._exit(1)
        raw = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:DIM], dtype=np.uint8) for t in texts]
        return np.stack(raw).astype(np.float32) - 127.5
