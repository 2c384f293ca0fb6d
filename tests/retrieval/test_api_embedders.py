"""OpenAI and Voyage embedders against a local server speaking their embeddings APIs."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.embedders import load_embedder
from tests.servers.embeddings_server import EmbeddingsServer, vector_for

SPECS = ["openai:text-embedding-3-small", "voyage:voyage-3-lite"]


@pytest.fixture(scope="module")
def server():
    with EmbeddingsServer(dim=24) as srv:
        yield srv


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-test")


def _embedder(spec, server, tmp_path, **kw):
    emb = load_embedder(spec, cache_dir=tmp_path, base_url=server.base_url, batch_size=kw.pop("batch_size", 4),
                        cache_mode=kw.pop("cache_mode", None))
    emb.sleeps = []
    emb.sleep = emb.sleeps.append  # backoff is asked for, never slept
    for name, value in kw.items():
        setattr(emb, name, value)
    return emb


@pytest.mark.parametrize("spec", SPECS)
def test_batches_vectors_and_cache(spec, server, tmp_path):
    texts = [f"passage number {i}" for i in range(10)]
    emb = _embedder(spec, server, tmp_path)
    before_requests, before_batches = server.requests, len(server.batch_sizes)
    vectors = emb.encode(texts + texts[:3])
    model = spec.split(":", 1)[1]
    expected = np.stack([vector_for(t, model, 24) for t in texts + texts[:3]])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert server.batch_sizes[before_batches:] == [4, 4, 2]  # 10 distinct texts, batches of 4
    assert server.requests - before_requests == 3
    assert emb.stats.model_calls == 3 and emb.stats.embedded == 10
    assert server.auth_headers[-1] in ("Bearer sk-test", "Bearer pa-test")

    again = _embedder(spec, server, tmp_path)  # new embedder, same on-disk cache
    reqs = server.requests
    np.testing.assert_array_equal(again.encode(texts), vectors[:10])
    assert server.requests == reqs and again.stats.model_calls == 0 and again.stats.cache_hits == 10


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_on_rate_limit_and_server_errors(spec, status, server, tmp_path):
    emb = _embedder(spec, server, tmp_path)
    server.fail_next(status, times=2, retry_after=0.01)
    reqs = server.requests
    vectors = emb.encode([f"retry {status} {spec}"])
    assert vectors.shape == (1, 24)
    assert server.requests - reqs == 3 and emb.stats.retries == 2
    assert emb.sleeps == [0.01, 0.01]  # the server's Retry-After


def test_retry_without_retry_after_uses_backoff(server, tmp_path):
    emb = _embedder("openai:m", server, tmp_path)
    emb.backoff_s = 0.5
    server.fail_next(500, times=2, retry_after=None)
    assert emb.encode(["no header"]).shape == (1, 24)
    assert emb.stats.retries == 2
    assert 0.5 <= emb.sleeps[0] <= 1.0 and 1.0 <= emb.sleeps[1] <= 1.5  # base·2^(n-1) plus jitter <= base


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("kind", ["not-json", "html", "empty", "no-data", "embedding-null", "wrong-count"])
def test_malformed_200_is_retried_and_never_cached(spec, kind, server, tmp_path):
    emb = _embedder(spec, server, tmp_path)
    server.malformed_next(kind, times=2)
    text = f"malformed {kind} {spec}"
    vectors = emb.encode([text, text + " 2"])
    model = spec.split(":", 1)[1]
    np.testing.assert_allclose(vectors[0], vector_for(text, model, 24), atol=1e-6)
    assert emb.stats.retries == 2 and emb.stats.model_calls == 1
    server.malformed_next(kind, times=3)
    emb.max_retries = 2
    with pytest.raises(RagdiagError, match=r"bad reply: .* after 2 retries$"):
        emb.encode(["never stored " + kind])
    replay = _embedder(spec, server, tmp_path, cache_mode="replay")
    with pytest.raises(RagdiagError, match=r"--cache replay: 1 of 1 distinct texts have no cached vector"):
        replay.encode(["never stored " + kind])


def test_cache_modes_replay_refresh_off(server, tmp_path):
    texts = ["mode a", "mode b", "mode c"]
    _embedder("openai:m", server, tmp_path).encode(texts[:2])
    reqs, checks = server.requests, server.model_list_requests
    replay = _embedder("openai:m", server, tmp_path, cache_mode="replay")
    assert replay.encode(texts[:2]).shape == (2, 24) and server.requests == reqs
    with pytest.raises(RagdiagError, match=r"^--cache replay: 1 of 3 distinct texts have no cached vector for openai:m@"):
        replay.encode(texts)
    assert server.requests == reqs and server.model_list_requests == checks  # replay never checks the endpoint either
    refresh = _embedder("openai:m", server, tmp_path, cache_mode="refresh")
    refresh.encode(texts[:2])
    refresh.encode(texts[:2])
    assert refresh.stats.embedded == 2 and refresh.stats.cache_hits == 2  # re-embedded once per embedder
    off = _embedder("openai:m", server, tmp_path / "off", cache_mode="off")
    off.encode(texts[:1])
    assert off.stats.embedded == 1 and not (tmp_path / "off").exists()
    with pytest.raises(RagdiagError, match="cache mode must be one of"):
        _embedder("openai:m", server, tmp_path, cache_mode="sometimes")


def test_key_holds_port_and_path_so_two_servers_never_share(server, tmp_path):
    with EmbeddingsServer(dim=24) as other:
        _embedder("openai:m", server, tmp_path).encode(["shared text"])
        emb = _embedder("openai:m", other, tmp_path)
        emb.encode(["shared text"])
        assert emb.stats.cache_hits == 0 and other.texts_embedded == 1


@pytest.mark.parametrize("spec", SPECS)
def test_gives_up_with_one_clear_line(spec, server, tmp_path):
    emb = _embedder(spec, server, tmp_path, max_retries=2)
    server.fail_next(429, times=3, retry_after=0)
    with pytest.raises(RagdiagError, match=r"embedding request failed: HTTP 429.* after 2 retries$"):
        emb.encode(["always limited"])


@pytest.mark.parametrize("spec,env", [(SPECS[0], "OPENAI_API_KEY"), (SPECS[1], "VOYAGE_API_KEY")])
def test_missing_key_is_a_clear_error(spec, env, server, tmp_path, monkeypatch):
    monkeypatch.delenv(env)
    with pytest.raises(RagdiagError, match=env):
        _embedder(spec, server, tmp_path).encode(["x"])


def test_base_url_from_environment_and_identity(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    emb = load_embedder("openai:m", cache_dir=tmp_path)
    assert emb.identity == f"openai:m@{server.base_url}"
    assert emb.cache_identity() == {"provider": "openai", "base_url": server.base_url, "model": "m", "params": {}}
    assert emb.encode(["env url"]).shape == (1, 24)
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert load_embedder("openai:m", cache_dir=tmp_path).identity == "openai:m"


def test_unknown_spec():
    with pytest.raises(RagdiagError, match="unknown embedder"):
        load_embedder("cohere:x")


def test_interrupted_run_keeps_finished_batches(server, tmp_path):
    emb = _embedder("openai:m", server, tmp_path, max_retries=0)
    texts = [f"resume {i}" for i in range(8)]
    calls = []
    original = emb._request

    def fail_second_batch(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            raise RagdiagError("stopped")
        return original(batch)

    emb._request = fail_second_batch
    with pytest.raises(RagdiagError, match="stopped"):
        emb.encode(texts)
    again = _embedder("openai:m", server, tmp_path)
    again.encode(texts)
    assert again.stats.cache_hits == 4 and again.stats.embedded == 4  # the first batch was kept
