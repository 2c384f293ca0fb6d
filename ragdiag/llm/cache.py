"""SQLite call cache for LLM requests: key = sha256 of the sorted-JSON request.

The request (provider, model, messages, parameters, prompt version, repeat index) is
serialised with sorted keys and hashed; the reply is stored with its token usage. Errors are
never stored and entries never expire by age or size. WAL journal plus one write transaction per
completed call: a process killed mid-run loses no completed call, and several workers or
processes can share one file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from ragdiag.errors import RagdiagError

CACHE_FILE = "llm_calls.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""
_COLUMNS = ("key", "model", "prompt", "request", "reply", "prompt_tokens", "completion_tokens", "created")


def canonical_json(request: dict[str, Any]) -> str:
    """The request as compact JSON with sorted keys (the text that is hashed)."""
    return json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: dict[str, Any]) -> str:
    """sha256 hex digest of :func:`canonical_json` of the request."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class CallCache:
    """Replies keyed by request hash; thread-safe (one connection behind a lock), multi-process safe (WAL)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), timeout=60, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` (reply and token counts) or None."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM calls WHERE key=?", (key,)).fetchone()
        return dict(zip(_COLUMNS, row)) if row else None

    def put(self, key: str, request: dict[str, Any], reply: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Store one completed call (committed at once); an existing entry is replaced."""
        row = (key, request.get("model", ""), request.get("prompt", ""), canonical_json(request), reply,
               int(prompt_tokens), int(completion_tokens), time.time())
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def stats(self) -> dict[str, Any]:
        """Entry counts and token totals per (model, prompt), plus the file size."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT model, prompt, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) "
                "FROM calls GROUP BY model, prompt ORDER BY model, prompt"
            ).fetchall()
        groups = [dict(zip(("model", "prompt", "entries", "prompt_tokens", "completion_tokens"), r)) for r in rows]
        return {"path": str(self.path), "entries": sum(g["entries"] for g in groups),
                "bytes": self.path.stat().st_size, "groups": groups}

    def export(self) -> Iterator[dict[str, Any]]:
        """Every entry as a dict (request parsed back from JSON), in key order."""
        with self._lock:
            rows = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM calls ORDER BY key").fetchall()
        for row in rows:
            entry = dict(zip(_COLUMNS, row))
            entry["request"] = json.loads(entry["request"])
            yield entry

    def import_entries(self, entries: list[dict[str, Any]], source: str) -> int:
        """Add exported entries (keys re-derived from the request and checked); returns the number added."""
        rows = []
        for index, entry in enumerate(entries):
            try:
                request, reply = entry["request"], entry["reply"]
                key = request_key(request)
                if entry.get("key", key) != key:
                    raise RagdiagError(f"{source}: entry {index}: key does not match the sha256 of its request")
                rows.append((key, request.get("model", ""), request.get("prompt", ""), canonical_json(request),
                             str(reply), int(entry.get("prompt_tokens", 0)), int(entry.get("completion_tokens", 0)),
                             float(entry.get("created", time.time()))))
            except (KeyError, TypeError, AttributeError, ValueError) as err:
                raise RagdiagError(f"{source}: entry {index}: malformed cache entry ({err})") from None
        with self._lock:
            before = self._conn.total_changes
            self._conn.execute("BEGIN")
            self._conn.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")
            return self._conn.total_changes - before

    def prune(self, model: str | None = None, prompt: str | None = None) -> int:
        """Delete entries of one model and/or prompt version (explicit only: nothing expires by itself)."""
        if model is None and prompt is None:
            raise RagdiagError("cache prune needs --model and/or --prompt (entries never expire by themselves)")
        clauses, params = [], []
        for column, value in (("model", model), ("prompt", prompt)):
            if value is not None:
                clauses.append(f"{column}=?")
                params.append(value)
        with self._lock:
            cur = self._conn.execute(f"DELETE FROM calls WHERE {' AND '.join(clauses)}", params)
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return cur.rowcount

    def integrity_ok(self) -> bool:
        """True when SQLite's integrity check passes."""
        with self._lock:
            return self._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def close(self) -> None:
        with self._lock:
            self._conn.close()
