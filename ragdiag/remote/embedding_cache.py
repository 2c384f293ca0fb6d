"""The embedding cache: one float32 vector per (embedder identity, text), in the shared SQLite store.

An embedder's identity is everything that changes its vectors: provider, normalised base URL
(scheme, host, port, path; no credentials), model and parameters (dimensions, input type,
prefixes ...). A vector's key is sha256 of the canonical JSON of ``{**identity, "text_sha256": h}``
(:func:`ragdiag.remote.store.request_key`, the same discipline as the LLM call cache), with h the
sha256 of the UTF-8 text. Durability, locking and corruption handling are the store's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.remote.store import SqliteStore, canonical_json, request_key

CACHE_FILE = "embeddings.sqlite"
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS embedders (
    identity_key TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    model TEXT NOT NULL,
    identity TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    identity_key TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
)""",
)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_LAST_FIELD = "text_sha256"


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorKeys:
    """Vector keys for one identity: request_key({**identity, "text_sha256": h}) for each text hash h.

    The identity's canonical JSON is hashed once; each text then only appends its hash (valid because
    "text_sha256" sorts after every identity field, which the constructor checks).
    """

    def __init__(self, identity: dict[str, Any]) -> None:
        if not identity or _LAST_FIELD in identity or max(identity) > _LAST_FIELD:
            raise ValueError(f"identity fields must sort before '{_LAST_FIELD}': {sorted(identity)}")
        self.identity = identity
        self.identity_key = request_key(identity)
        self._prefix = hashlib.sha256(canonical_json(identity)[:-1].encode("utf-8"))

    def key(self, text_sha256: str) -> str:
        digest = self._prefix.copy()
        digest.update(f',"{_LAST_FIELD}":"{text_sha256}"}}'.encode())
        return digest.hexdigest()


def _vector_row(entry: Any) -> tuple[dict[str, Any], tuple]:
    """(identity, vectors-table row) of one exported entry after checking it; ValueError says what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    identity, text_sha, dim = entry.get("identity"), entry.get("text_sha256"), entry.get("dim")
    if not isinstance(identity, dict) or not isinstance(identity.get("model"), str):
        raise ValueError("identity must be an object with a string model")
    if not isinstance(text_sha, str) or not _SHA256.fullmatch(text_sha):
        raise ValueError("text_sha256 must be 64 lower-case hex digits")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError("dim must be a whole number >= 1")
    try:
        vector = np.frombuffer(base64.b64decode(str(entry.get("vector")), validate=True), dtype="<f4")
        keys = VectorKeys(identity)
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"bad vector or identity ({err})") from None
    if vector.shape != (dim,) or not np.isfinite(vector).all():
        raise ValueError(f"vector must hold {dim} finite float32 values")
    key = keys.key(text_sha)
    if entry.get("key", key) != key:
        raise ValueError("key does not match the sha256 of its identity and text hash")
    created = entry.get("created", time.time())
    if isinstance(created, bool) or not isinstance(created, (int, float)) or not math.isfinite(created):
        raise ValueError("created must be a number")
    return identity, (key, keys.identity_key, text_sha, dim, vector.tobytes(), float(created))


class EmbeddingCache:
    """Vectors keyed by identity and text hash; thread-safe and multi-process safe (the shared store)."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = Path(path)
        self.store = SqliteStore(self.path, _SCHEMA, create=create)

    def register(self, identity: dict[str, Any], label: str) -> VectorKeys:
        """Record an embedder identity (its readable label and model) and return its key maker."""
        keys = VectorKeys(identity)
        self.store.execute("INSERT OR IGNORE INTO embedders VALUES (?, ?, ?, ?)",
                           (keys.identity_key, label, str(identity.get("model", "")), canonical_json(identity)))
        return keys

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those keys that are present."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 900):
            chunk = keys[start : start + 900]
            rows = self.store.query(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            found.update((key, np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    def put_many(self, keys: VectorKeys, text_hashes: list[str], vectors: np.ndarray, replace: bool = False) -> None:
        """Store vectors (one row per text, one transaction); existing entries kept unless ``replace``."""
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        now = time.time()
        rows = [(keys.key(h), keys.identity_key, h, vectors.shape[1], vectors[i].tobytes(), now)
                for i, h in enumerate(text_hashes)]
        self.store.write(f"INSERT OR {'REPLACE' if replace else 'IGNORE'} INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows)

    def stats(self) -> dict[str, Any]:
        """Vector counts per embedder, plus the file size."""
        rows = self.store.query(
            "SELECT e.label, e.model, COUNT(v.key), MAX(v.dim) FROM embedders e JOIN vectors v "
            "ON v.identity_key = e.identity_key GROUP BY e.identity_key ORDER BY e.label")
        groups = [dict(zip(("embedder", "model", "entries", "dim"), r)) for r in rows]
        return {"kind": "embeddings", "path": str(self.path), "entries": sum(g["entries"] for g in groups),
                "bytes": self.store.size_bytes(), "groups": groups}

    def export(self) -> Iterator[dict[str, Any]]:
        """Every vector as a dict (identity, text hash, base64 little-endian float32), in key order."""
        rows = self.store.query(
            "SELECT v.key, e.label, e.identity, v.text_sha256, v.dim, v.vector, v.created FROM vectors v "
            "JOIN embedders e ON v.identity_key = e.identity_key ORDER BY v.key")
        for key, label, identity, text_sha, dim, blob, created in rows:
            yield {"kind": "embeddings", "key": key, "label": label, "identity": json.loads(identity),
                   "text_sha256": text_sha, "dim": dim, "vector": base64.b64encode(blob).decode("ascii"),
                   "created": created}

    def import_entries(self, entries: list[Any], source: str, numbers: list[int] | None = None) -> tuple[int, list[str]]:
        """Add exported vectors (existing keys kept); returns (added, one reason per skipped entry)."""
        identities: dict[str, tuple[dict[str, Any], str]] = {}
        rows, skipped = [], []
        for index, entry in zip(numbers or range(1, len(entries) + 1), entries):
            try:
                identity, row = _vector_row(entry)
            except ValueError as err:
                skipped.append(f"{source}: entry {index}: {err}")
                continue
            label = entry.get("label")
            identities[row[1]] = (identity, label if isinstance(label, str) else identity["model"])
            rows.append(row)
        for identity, label in identities.values():
            self.register(identity, label)
        return self.store.write("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows), skipped

    def prune(self, model: str | None = None, embedder: str | None = None) -> int:
        """Delete the vectors of one model name and/or one embedder label (nothing expires by itself)."""
        if model is None and embedder is None:
            raise RagdiagError("cache prune of embeddings needs --model (entries never expire by themselves)")
        clauses = [(f"{column}=?", value) for column, value in (("model", model), ("label", embedder)) if value is not None]
        where = " AND ".join(c for c, _ in clauses)
        deleted = self.store.execute(
            f"DELETE FROM vectors WHERE identity_key IN (SELECT identity_key FROM embedders WHERE {where})",
            [v for _, v in clauses])
        self.store.execute(f"DELETE FROM embedders WHERE {where}", [v for _, v in clauses])
        self.store.checkpoint()
        return deleted

    def close(self) -> None:
        self.store.close()
