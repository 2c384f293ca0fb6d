"""On-disk embedding cache: SQLite, keyed by (model identity, sha256 of the text).

Embedding the same texts again with the same model makes no model call.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
)
"""


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors stored as float32 blobs; safe for several processes (WAL, busy timeout)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    def get_many(self, model: str, keys: list[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those keys that are present."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 900):
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT text_sha256, vector FROM embeddings WHERE model=? AND text_sha256 IN ({marks})",
                [model, *chunk],
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, keys: list[str], vectors: np.ndarray) -> None:
        """Store vectors (one row per key); existing entries are kept."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = [(model, k, vectors.shape[1], vectors[i].tobytes()) for i, k in enumerate(keys)]
        with self._conn:
            self._conn.executemany("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def close(self) -> None:
        self._conn.close()
