"""Call cache: key derivation, storage, export/import, prune, concurrent writers."""

from __future__ import annotations

import json
import threading

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.remote.call_cache import CallCache, canonical_json, request_key


def _request(**changes):
    req = {"provider": "p", "model": "m", "messages": [{"role": "user", "content": "hi"}],
           "params": {"temperature": 0.0, "seed": 0}, "prompt": "grading@v1"}
    req.update(changes)
    return req


def test_key_is_sha256_of_sorted_json_and_order_independent():
    a = _request()
    b = dict(reversed(list(a.items())))
    assert request_key(a) == request_key(b)
    import hashlib

    assert request_key(a) == hashlib.sha256(canonical_json(a).encode()).hexdigest()
    assert json.loads(canonical_json(a)) == a


@pytest.mark.parametrize("change", [{"prompt": "grading@v2"}, {"repeat": 1}, {"model": "other"},
                                    {"params": {"temperature": 0.5, "seed": 0}}, {"provider": "q"}])
def test_key_changes_with_every_request_part(change):
    assert request_key(_request(**change)) != request_key(_request())


def test_put_get_stats_export_import_prune(tmp_path):
    cache = CallCache(tmp_path / "a.sqlite")
    assert cache.get("nope") is None
    for i in range(3):
        req = _request(repeat=i)
        cache.put(request_key(req), req, f"reply {i}", 10, 2)
    req = _request(prompt="generation@v1")
    cache.put(request_key(req), req, "answer", 5, 1)
    hit = cache.get(request_key(_request(repeat=1)))
    assert (hit["reply"], hit["prompt_tokens"], hit["completion_tokens"]) == ("reply 1", 10, 2)
    stats = cache.stats()
    assert stats["entries"] == 4
    assert {(g["prompt"], g["entries"]) for g in stats["groups"]} == {("grading@v1", 3), ("generation@v1", 1)}

    exported = list(cache.export())
    other = CallCache(tmp_path / "b.sqlite")
    assert other.import_entries(exported, "x") == (4, [])
    assert other.import_entries(exported, "x") == (0, [])  # existing keys kept
    assert other.get(request_key(req))["reply"] == "answer"

    bad = [dict(exported[0], key="0" * 64), dict(exported[1], reply=None), {**exported[2], "request": "text"},
           dict(exported[3], request={**exported[3]["request"], "model": 7}), dict(exported[0], prompt_tokens=-1), 5]
    fresh = CallCache(tmp_path / "fresh.sqlite")
    added, skipped = fresh.import_entries(bad + [exported[1]], "x.jsonl")
    assert added == 1 and fresh.stats()["entries"] == 1  # only the good entry, stored as it was
    assert [s.split(": ", 2)[2] for s in skipped] == [
        "key does not match the sha256 of its request", "reply must be a string", "request must be an object",
        "request model and prompt must be strings", "prompt_tokens must be a whole number >= 0", "not a JSON object"]
    assert skipped[0].startswith("x.jsonl: entry 1: ")
    with pytest.raises(RagdiagError, match="needs --model"):
        cache.prune()
    assert cache.prune(prompt="grading@v1") == 3
    assert cache.stats()["entries"] == 1
    assert cache.integrity_ok()


def test_concurrent_writers_keep_every_entry(tmp_path):
    path = tmp_path / "c.sqlite"
    caches = [CallCache(path) for _ in range(2)]  # two connections, as two processes would have

    def write(worker: int) -> None:
        for i in range(50):
            req = _request(repeat=worker * 1000 + i)
            caches[worker % 2].put(request_key(req), req, "r", 1, 1)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert CallCache(path).stats()["entries"] == 400
    assert caches[0].integrity_ok()
