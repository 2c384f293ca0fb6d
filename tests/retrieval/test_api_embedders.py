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
    emb = load_embedder(spec, cache_dir=tmp_path, base_url=server.base_url, batch_size=kw.pop("batch_size", 4))
    emb.backoff_s = 0.01
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


def test_retry_without_retry_after_uses_backoff(server, tmp_path):
    emb = _embedder("openai:m", server, tmp_path)
    server.fail_next(500, times=1, retry_after=None)
    assert emb.encode(["no header"]).shape == (1, 24)
    assert emb.stats.retries == 1


@pytest.mark.parametrize("spec", SPECS)
def test_gives_up_with_one_clear_line(spec, server, tmp_path):
    emb = _embedder(spec, server, tmp_path, max_retries=2)
    server.fail_next(429, times=3, retry_after=0)
    with pytest.raises(RagdiagError, match=r"after 2 retries: HTTP 429"):
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
