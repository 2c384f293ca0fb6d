"""The LLM call cache: replies keyed by sha256 of the sorted-JSON request, in the shared SQLite store.

The request (provider and full base URL, model, messages, parameters, prompt version, repeat index)
is serialised with sorted keys and hashed (:func:`ragdiag.remote.store.request_key`); the reply is
stored with its token usage. Failed calls and unusable replies are never stored, and entries never
expire by age or size. A ``leases`` table shares requests in flight across processes: the process
that claims a key's lease sends the request, others wait for its reply (:meth:`CallCache.take_lease`),
at most as long as their own lease would stand. Durability, locking and corruption handling are
:class:`ragdiag.remote.store.SqliteStore`'s, shared with the embedding cache.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.remote.store import SqliteStore, canonical_json, request_key

__all__ = ["CACHE_FILE", "CallCache", "canonical_json", "request_key"]

CACHE_FILE = "llm_calls.sqlite"
_SCHEMA = ("""
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    origin TEXT NOT NULL DEFAULT ''
)""", """
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
)""")
# a standing lease: not expired, and not expiring later than the reader's own lease would (any later
# expiry is void whatever the file says: tampered, or written by a clock far ahead)
_TAKE_LEASE = ("INSERT INTO leases VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET owner=excluded.owner, "
               "host=excluded.host, pid=excluded.pid, expires=excluded.expires "
               "WHERE leases.expires < ? OR leases.expires > ?")
_COLUMNS = ("key", "model", "prompt", "request", "reply", "prompt_tokens", "completion_tokens", "created", "origin")
_INSERT = f"INSERT OR {{}} INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True


def _count(entry: dict[str, Any], name: str) -> int:
    value = entry.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0")
    return value


def entry_row(entry: Any) -> tuple:
    """The table row of one exported entry, after checking it; ValueError names what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    request, reply = entry.get("request"), entry.get("reply")
    if not isinstance(request, dict):
        raise ValueError("request must be an object")
    if not isinstance(reply, str):
        raise ValueError("reply must be a string")
    model, prompt = request.get("model"), request.get("prompt", "")
    if not isinstance(model, str) or not isinstance(prompt, str):
        raise ValueError("request model and prompt must be strings")
    try:
        key = request_key(request)
    except ValueError as err:
        raise ValueError(f"request is not plain JSON ({err})") from None
    if entry.get("key", key) != key:
        raise ValueError("key does not match the sha256 of its request")
    origin = entry.get("origin", "")
    if not isinstance(origin, str):
        raise ValueError("origin must be a string")
    created = entry.get("created", time.time())
    if isinstance(created, bool) or not isinstance(created, (int, float)) or not math.isfinite(created):
        raise ValueError("created must be a number")
    return (key, model, prompt, canonical_json(request), reply, _count(entry, "prompt_tokens"),
            _count(entry, "completion_tokens"), float(created), origin)


class CallCache:
    """Replies keyed by request hash; thread-safe and multi-process safe (the shared store)."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = Path(path)
        self.store = SqliteStore(self.path, _SCHEMA, create=create)
        columns = {row[1] for row in self.store.query("PRAGMA table_info(calls)")}
        if "origin" not in columns:  # a cache written before replies kept their origin
            with contextlib.suppress(RagdiagError):  # another process added it first
                self.store.execute("ALTER TABLE calls ADD COLUMN origin TEXT NOT NULL DEFAULT ''")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` (reply and token counts) or None."""
        rows = self.store.query(f"SELECT {', '.join(_COLUMNS)} FROM calls WHERE key=?", (key,))
        return dict(zip(_COLUMNS, rows[0])) if rows else None

    def put(self, key: str, request: dict[str, Any], reply: str, prompt_tokens: int, completion_tokens: int,
            origin: str = "") -> None:
        """Store one completed call (committed at once); an existing entry is replaced. ``origin``:
        the server's provenance mark (:mod:`ragdiag.io.provenance`), kept with the reply."""
        row = (key, request.get("model", ""), request.get("prompt", ""), canonical_json(request), reply,
               int(prompt_tokens), int(completion_tokens), time.time(), origin)
        self.store.execute(_INSERT.format("REPLACE"), row)

    def take_lease(self, key: str, owner: str, seconds: float) -> bool:
        """Claim the right to send request ``key`` for ``seconds`` (a lease row); False while another
        live owner holds a standing lease (:meth:`lease_held`). A lease whose owner process is gone (same
        host, pid not running: killed) is taken over at once, and so is one that claims to stand longer
        than ``seconds`` from now."""
        now = time.time()
        if self.store.execute(_TAKE_LEASE, (key, owner, socket.gethostname(), os.getpid(), now + seconds, now,
                                            now + seconds)):
            return True
        rows = self.store.query("SELECT owner, host, pid FROM leases WHERE key=?", (key,))
        if rows and rows[0][1] == socket.gethostname() and not _running(rows[0][2]):
            self.store.execute("DELETE FROM leases WHERE key=? AND owner=?", (key, rows[0][0]))
            return self.take_lease(key, owner, seconds)
        return False

    def lease_held(self, key: str, seconds: float) -> bool:
        """True while some owner holds a standing lease on ``key``: unexpired, and expiring within
        ``seconds`` (the reader's own lease) from now, so a wait has that upper bound whatever the
        file says. A process whose lease is longer than the reader's (a larger ``--timeout``) may then
        see its request sent twice; never a wait without end."""
        now = time.time()
        return bool(self.store.query("SELECT 1 FROM leases WHERE key=? AND expires >= ? AND expires <= ?",
                                     (key, now, now + seconds)))

    def drop_lease(self, key: str, owner: str) -> None:
        """Release ``owner``'s lease on ``key`` (after its reply is stored, or after its call failed)."""
        self.store.execute("DELETE FROM leases WHERE key=? AND owner=?", (key, owner))

    def stats(self) -> dict[str, Any]:
        """Entry counts and token totals per (model, prompt), plus the file size."""
        rows = self.store.query(
            "SELECT model, prompt, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) "
            "FROM calls GROUP BY model, prompt ORDER BY model, prompt")
        groups = [dict(zip(("model", "prompt", "entries", "prompt_tokens", "completion_tokens"), r)) for r in rows]
        return {"kind": "llm", "path": str(self.path), "entries": sum(g["entries"] for g in groups),
                "bytes": self.store.size_bytes(), "groups": groups}

    def export(self) -> Iterator[dict[str, Any]]:
        """Every entry as a dict (request parsed back from JSON), in key order."""
        for row in self.store.query(f"SELECT {', '.join(_COLUMNS)} FROM calls ORDER BY key"):
            entry = dict(zip(_COLUMNS, row))
            entry["request"] = json.loads(entry["request"])
            if not entry["origin"]:  # unmarked: exported as before the mark existed
                del entry["origin"]
            yield entry

    def import_entries(self, entries: list[Any], source: str, numbers: list[int] | None = None) -> tuple[int, list[str]]:
        """Add exported entries (existing keys kept); returns (added, one reason per skipped entry).

        Each entry is checked (request an object, reply a string, model and prompt strings, token
        counts whole numbers, key re-derived from the request); bad entries are skipped, not stored.
        ``numbers`` are the entries' numbers in the source file (default 1, 2, ...), for the reasons.
        """
        rows, skipped = [], []
        for index, entry in zip(numbers or range(1, len(entries) + 1), entries):
            try:
                rows.append(entry_row(entry))
            except ValueError as err:
                skipped.append(f"{source}: entry {index}: {err}")
        return self.store.write(_INSERT.format("IGNORE"), rows), skipped

    def prune(self, model: str | None = None, prompt: str | None = None) -> int:
        """Delete entries of one model and/or prompt version (explicit only: nothing expires by itself)."""
        if model is None and prompt is None:
            raise RagdiagError("cache prune needs --model and/or --prompt (entries never expire by themselves)")
        clauses = [(f"{column}=?", value) for column, value in (("model", model), ("prompt", prompt)) if value is not None]
        deleted = self.store.execute(f"DELETE FROM calls WHERE {' AND '.join(c for c, _ in clauses)}",
                                     [v for _, v in clauses])
        self.store.checkpoint()
        return deleted

    def integrity_ok(self) -> bool:
        """True when SQLite's integrity check passes."""
        return self.store.integrity_ok()

    def close(self) -> None:
        self.store.close()
