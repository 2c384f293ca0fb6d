"""One durable SQLite store under both caches (LLM calls and embeddings).

Keys are sha256(canonical JSON of the request): compact, sorted keys, UTF-8. The file is opened in WAL
mode with a busy timeout, so several workers and processes can share it; every write is one
transaction, so a killed process loses no completed call and never leaves half an entry. A file that
is not a usable SQLite database (truncated, random bytes, overwritten header, a folder in its place)
ends the run with one line naming the file and what to do, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError

INIT_ATTEMPTS = 20
BUSY_TIMEOUT_S = 60.0
CACHE_MODES = ("rw", "replay", "off", "refresh")  # read+write | cache only, never the network | none | re-ask once


def canonical_json(request: Any) -> str:
    """The request as compact JSON with sorted keys (the text that is hashed)."""
    return json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def request_key(request: Any) -> str:
    """sha256 hex digest of :func:`canonical_json` of the request."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class StoreError(RagdiagError):
    """The cache file cannot be used."""


def unusable(path: Path, problem: str) -> StoreError:
    """The one message for a cache file that cannot be used."""
    return StoreError(f"{path}: {problem}; run with --cache off, or move the file aside "
                      f"(mv '{path}' '{path}.broken') to start a new cache")


class SqliteStore:
    """One SQLite file behind a lock: thread-safe (one connection), multi-process safe (WAL)."""

    def __init__(self, path: Path, schema: Sequence[str], create: bool = True) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        if self.path.is_dir():
            raise unusable(self.path, "is a folder where the cache file should be")
        if not create and not self.path.is_file():
            raise RagdiagError(f"no cache at {self.path}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise RagdiagError(f"{self.path.parent}: cannot create the cache folder ({err.strerror})") from None
        if self.path.parent.is_file():
            raise RagdiagError(f"{self.path.parent}: is a file, not a cache folder")
        try:
            self._conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S, check_same_thread=False,
                                         isolation_level=None)
        except sqlite3.Error as err:
            raise unusable(self.path, f"cannot be opened as a cache ({err})") from None
        with self._guard():
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            for attempt in range(INIT_ATTEMPTS):  # switching a new file to WAL answers "locked" at once, without
                try:                              # waiting, while another process is switching it too
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as err:
                    if "locked" not in str(err) or attempt == INIT_ATTEMPTS - 1:
                        raise
                    time.sleep(0.1 * (attempt + 1))
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            for statement in schema:
                self._conn.execute(statement)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as err:
            if "locked" in str(err) or "busy" in str(err):
                raise RagdiagError(f"{self.path}: the cache stayed locked by another process for "
                                   f"{BUSY_TIMEOUT_S:g} s ({err})") from None
            raise unusable(self.path, f"is not a usable cache ({err})") from None
        except sqlite3.DatabaseError as err:
            raise unusable(self.path, f"is not a readable SQLite cache ({err})") from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """All rows of one read."""
        with self._lock, self._guard():
            return self._conn.execute(sql, params).fetchall()

    def write(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run ``sql`` once per row in one transaction (all or nothing); returns the rows changed."""
        with self._lock, self._guard():
            before = self._conn.total_changes
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(sql, rows)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return self._conn.total_changes - before

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement in its own transaction; returns the rows changed."""
        return self.write(sql, [params])

    def checkpoint(self) -> None:
        """Fold the WAL into the main file (after deleting entries)."""
        with self._lock, self._guard():
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def integrity_ok(self) -> bool:
        """True when SQLite's integrity check passes."""
        with self._lock, self._guard():
            return self._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def size_bytes(self) -> int:
        return self.path.stat().st_size

    def close(self) -> None:
        with self._lock:
            self._conn.close()
