"""The lease rows of the LLM call cache (:class:`ragdiag.remote.call_cache.CallCache`) have an upper bound
whatever the file says (issue 44): a row whose expiry lies further ahead than the lease the reader would
take itself is void — tampered, or written by a clock far ahead — so no process waits on it without end."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.remote.call_cache import CACHE_FILE, CallCache
from ragdiag.remote.store import request_key
from tests.servers.chat_server import ChatServer


def _plant(cache: CallCache, key: str, expires: float) -> None:
    """A lease row owned by this live process (as a tampered file would hold one)."""
    cache.store.execute("INSERT INTO leases VALUES (?, ?, ?, ?, ?)",
                        (key, "someone", socket.gethostname(), os.getpid(), expires))


def test_a_lease_claiming_more_than_its_bound_is_void(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    _plant(cache, "k", 1e12)  # a live owner, an expiry 30,000 years ahead
    assert not cache.lease_held("k", 60)
    assert cache.take_lease("k", "me", 60)
    assert cache.lease_held("k", 60) and not cache.take_lease("k", "other", 60)
    cache.close()


def test_a_lease_within_its_bound_still_holds(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    _plant(cache, "k", time.time() + 30)
    assert cache.lease_held("k", 60) and not cache.take_lease("k", "me", 60)
    cache.close()


@pytest.mark.parametrize("expires", [1e12, float("inf")])
def test_a_client_does_not_wait_on_a_tampered_lease(tmp_path, monkeypatch, expires):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as server:
        client = LLMClient(ClientConfig(base_url=server.base_url, cache_dir=tmp_path, timeout=5, max_retries=0))
        request = client.request([{"role": "user", "content": "hello"}], "test@v1")
        cache = CallCache(tmp_path / CACHE_FILE)
        _plant(cache, request_key(request), expires)
        replies: list[str] = []
        asking = threading.Thread(target=lambda: replies.append(client.chat(request).text), daemon=True)
        asking.start()
        asking.join(timeout=30)
        assert not asking.is_alive() and replies and server.requests == 1
        client.close()
        cache.close()
