"""The shared SQLite store: keys, atomic writes, concurrent writers, and broken files as one clear line."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.remote.call_cache import CallCache
from ragdiag.remote.embedding_cache import EmbeddingCache
from ragdiag.remote.store import SqliteStore, canonical_json, request_key

SCHEMA = ("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT NOT NULL)",)


def test_key_is_sha256_of_compact_sorted_json():
    request = {"b": [1, {"y": 2, "x": "é"}], "a": None}
    assert canonical_json(request) == '{"a":null,"b":[1,{"x":"é","y":2}]}'
    assert request_key(request) == hashlib.sha256('{"a":null,"b":[1,{"x":"é","y":2}]}'.encode()).hexdigest()
    with pytest.raises(ValueError):
        canonical_json({"temperature": float("nan")})  # never a key that JSON cannot read back


def test_wal_mode_and_all_or_nothing_writes(tmp_path):
    store = SqliteStore(tmp_path / "s.sqlite", SCHEMA)
    assert store.query("PRAGMA journal_mode") == [("wal",)]
    assert store.write("INSERT INTO t VALUES (?, ?)", [("a", "1"), ("b", "2")]) == 2
    with pytest.raises(RagdiagError):  # the second row breaks NOT NULL: the whole batch is rolled back
        store.write("INSERT INTO t VALUES (?, ?)", [("c", "3"), ("d", None)])
    assert store.query("SELECT k FROM t ORDER BY k") == [("a",), ("b",)]


def test_two_connections_writing_at_once_keep_every_row(tmp_path):
    path = tmp_path / "s.sqlite"
    stores = [SqliteStore(path, SCHEMA), SqliteStore(path, SCHEMA)]

    def write(worker: int) -> None:
        for i in range(40):
            stores[worker % 2].execute("INSERT INTO t VALUES (?, ?)", (f"{worker}-{i}", "v"))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stores[0].query("SELECT COUNT(*) FROM t") == [(240,)] and stores[1].integrity_ok()


def _filled(path):
    cache = CallCache(path)
    for i in range(200):
        request = {"provider": "p", "model": "m", "prompt": "x@v1", "messages": [{"role": "user", "content": f"q{i}" * 50}]}
        cache.put(request_key(request), request, "reply " * 40, 1, 1)
    cache.store.checkpoint()
    cache.close()


def _truncate(path):
    _filled(path)
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 3)


def _random(path):
    path.write_bytes(os.urandom(64 * 1024))


def _header(path):
    _filled(path)
    with open(path, "r+b") as handle:
        handle.write(b"this is no longer SQLite!")


def _folder(path):
    path.mkdir()


@pytest.mark.parametrize("breaker", [_truncate, _random, _header, _folder], ids=["truncated", "random", "header", "folder"])
@pytest.mark.parametrize("cache_class", [CallCache, EmbeddingCache])
def test_broken_cache_file_is_one_line_naming_it_and_the_way_out(tmp_path, breaker, cache_class):
    path = tmp_path / "cache.sqlite"
    breaker(path)
    with pytest.raises(RagdiagError) as caught:
        cache = cache_class(path)
        if cache_class is CallCache:
            list(cache.export())
        else:
            cache.get_many(["0" * 64])
            list(cache.export())
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert "--cache off" in message and "move the file aside" in message


def test_locked_database_is_a_clear_error(tmp_path, monkeypatch):
    import ragdiag.remote.store as store_module

    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "s.sqlite"
    store = SqliteStore(path, SCHEMA)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(RagdiagError, match=r"stayed locked by another process"):
            store.execute("INSERT INTO t VALUES ('a', 'b')")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
