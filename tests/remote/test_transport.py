"""The transport seam: the chat client and both API embedders send through an httpx.MockTransport
(no server, no patching); the endpoint check; base-URL checks and redaction."""

from __future__ import annotations

import base64
import json
import socket

import httpx
import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import CallFailed, ClientConfig, LLMClient
from ragdiag.remote.endpoint import check_endpoint
from ragdiag.remote.retry import Refused
from ragdiag.remote.transport import use_transport
from ragdiag.remote.urls import cache_url, check_base_url, redact_url
from ragdiag.retrieval.embedders import load_embedder

BASE = "http://mock.local:8000/v1"


class Recorder:
    """A MockTransport handler: answers GET /models, then the scripted replies in order, recording requests
    (not the client's look for a slot count, ``GET /props``, which it answers 404 as OpenAI does)."""

    def __init__(self, *replies: httpx.Response) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/props"):
            return httpx.Response(404)
        self.requests.append(request)
        if request.method == "GET":
            return httpx.Response(200, json={"object": "list", "data": []})
        return self.replies.pop(0)

    @property
    def posts(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == "POST"]


def _chat(content):
    return httpx.Response(200, json={"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                                     "usage": {"prompt_tokens": 3, "completion_tokens": 2}})


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mock")
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-mock")


def test_chat_goes_through_the_seam_and_malformed_replies_are_retried_not_cached(tmp_path):
    handler = Recorder(httpx.Response(200, text="<html>502 Bad Gateway</html>", headers={"content-type": "text/html"}),
                       httpx.Response(200, json={"id": "x"}), _chat(None), _chat("the answer"))
    sleeps: list[float] = []
    with use_transport(httpx.MockTransport(handler)):
        client = LLMClient(ClientConfig(base_url=BASE, cache_dir=tmp_path, backoff_base=0.5), sleep=sleeps.append)
        request = client.request([{"role": "user", "content": "q"}], "test@v1")
        result = client.chat(request)
    assert result.text == "the answer" and (result.prompt_tokens, result.completion_tokens) == (3, 2)
    assert len(sleeps) == 3 and client.stats.retries == 3
    assert [r.url.path for r in handler.requests] == ["/v1/models"] + ["/v1/chat/completions"] * 4
    assert json.loads(handler.posts[0].content)["model"] == "gpt-4o-mini"
    assert handler.posts[0].headers["authorization"] == "Bearer sk-mock"
    assert client.cache.stats()["entries"] == 1  # only the good reply


@pytest.mark.parametrize("reply,reason", [
    (httpx.Response(200, text="{not json", headers={"content-type": "application/json"}), "the reply is not JSON"),
    (httpx.Response(200, text="<!DOCTYPE html><p>login</p>", headers={"content-type": "text/html"}), "an HTML page"),
    (httpx.Response(200, json={"id": "x", "choices": []}), "the reply has no choices"),
    (_chat(None), "content is null"),
    (_chat("   "), "content is empty"),
])
def test_each_malformed_chat_reply_fails_its_item_with_the_reason(tmp_path, reply, reason):
    handler = Recorder(reply, reply)
    with use_transport(httpx.MockTransport(handler)):
        client = LLMClient(ClientConfig(base_url=BASE, cache_dir=tmp_path, max_retries=1), sleep=lambda s: None)
        with pytest.raises(CallFailed, match=rf"^bad reply: .*{reason}.* after 1 retries$"):
            client.chat(client.request([{"role": "user", "content": "q"}], "test@v1"))
    assert client.cache.stats()["entries"] == 0 and client.stats.failures == 1


def _embeddings_reply(request: httpx.Request) -> httpx.Response:
    """What an OpenAI or Voyage server answers: vector (len(text), 1) per text; base64 when the client asks
    for it (the voyageai SDK does), else floats listed in reverse with their ``index`` (order by index)."""
    body = json.loads(request.content)
    vectors = [np.array([len(t), 1.0], dtype=np.float32) for t in body["input"]]
    if body.get("encoding_format") == "base64":
        data = [{"index": i, "embedding": base64.b64encode(v.tobytes()).decode()} for i, v in enumerate(vectors)]
    else:
        data = [{"index": i, "embedding": v.tolist()} for i, v in reversed(list(enumerate(vectors)))]
    return httpx.Response(200, json={"data": data, "model": body["model"], "usage": {"total_tokens": 3}})


def test_embedders_go_through_the_seam(tmp_path):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(404)  # a server without /models is fine
        return _embeddings_reply(request)

    with use_transport(httpx.MockTransport(handler)):
        for spec in ("openai:m", "voyage:v"):
            vectors = load_embedder(spec, cache_dir=tmp_path, base_url=BASE).encode(["ab", "abcd"])
            expected = np.array([[2, 1], [4, 1]], dtype=np.float32)
            np.testing.assert_allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6)


def test_voyage_sdk_through_a_mock_transport_retries_under_the_one_policy(tmp_path):
    """The voyageai SDK, no server: 429 with Retry-After, a 503, a dropped connection, an HTML 200, then vectors."""

    def dropped(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection reset", request=request)

    replies = [lambda r: httpx.Response(429, json={"detail": "slow down"}, headers={"Retry-After": "7"}),
               lambda r: httpx.Response(503, text="busy"),
               dropped,
               lambda r: httpx.Response(200, text="<html>portal</html>", headers={"content-type": "text/html"}),
               _embeddings_reply]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": []}) if request.method == "GET" else replies.pop(0)(request)

    sleeps: list[float] = []
    with use_transport(httpx.MockTransport(handler)):
        emb = load_embedder("voyage:voyage-3-lite", cache_dir=tmp_path, base_url=BASE)
        emb.sleep, emb.backoff_s = sleeps.append, 0.25
        vectors = emb.encode(["abc"])
    np.testing.assert_allclose(vectors, [[3 / np.sqrt(10), 1 / np.sqrt(10)]], rtol=1e-6)
    assert emb.stats.retries == 4 and len(sleeps) == 4
    assert sleeps[0] == 7.0  # the server's Retry-After, read from the SDK's RateLimitError
    assert all(0.25 <= s <= 2.25 for s in sleeps[1:])  # backoff base·2^(n-1) plus jitter
    posts = [r for r in seen if r.method == "POST"]
    assert [r.url.path for r in posts] == ["/v1/embeddings"] * 5
    sent = json.loads(posts[-1].content)
    assert sent["model"] == "voyage-3-lite" and sent["input"] == ["abc"] and sent["truncation"] is True
    assert posts[-1].headers["authorization"] == "Bearer pa-mock"


def test_voyage_sdk_timeouts_are_retried_then_fail_with_one_line(tmp_path):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"data": []})
        raise httpx.ReadTimeout("timed out", request=request)

    with use_transport(httpx.MockTransport(handler)):
        emb = load_embedder("voyage:v", cache_dir=tmp_path, base_url=BASE, cache_mode="off")
        emb.sleep, emb.max_retries = (lambda s: None), 2
        with pytest.raises(RagdiagError, match=r"^voyage:v@http://mock\.local:8000/v1: embedding request failed: "
                                               r"Timeout: Request timed out: .* after 2 retries$"):
            emb.encode(["x"])
    assert emb.stats.retries == 2


@pytest.mark.parametrize("status,error", [(401, Refused), (400, RagdiagError)])
def test_voyage_sdk_errors_stop_the_run_or_fail_the_item_without_retries(tmp_path, status, error):
    handler = Recorder(httpx.Response(status, json={"detail": "no"}))
    with use_transport(httpx.MockTransport(handler)):
        emb = load_embedder("voyage:v", cache_dir=tmp_path, base_url=BASE)
        emb.sleep = lambda s: pytest.fail("a refused or invalid request is not retried")
        with pytest.raises(error, match=rf"HTTP {status}: no"):
            emb.encode(["x"])
    assert len(handler.posts) == 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_endpoint_check_dead_server_refused_key_and_redaction():
    dead = f"http://user:secret@127.0.0.1:{_free_port()}/v1"
    with pytest.raises(RagdiagError) as caught:
        check_endpoint(dead, "k", "OPENAI_API_KEY")
    message = str(caught.value)
    assert message.startswith("cannot reach http://127.0.0.1:") and "secret" not in message and "user" not in message
    with use_transport(httpx.MockTransport(lambda request: httpx.Response(401))):  # noqa: SIM117 (the inner context needs the outer one's object)
        with pytest.raises(Refused, match=r"refused the API key \(HTTP 401\); check \$OPENAI_API_KEY"):
            check_endpoint(BASE, "k", "OPENAI_API_KEY")
    with use_transport(httpx.MockTransport(lambda request: httpx.Response(503))):
        assert check_endpoint(BASE, "k", "OPENAI_API_KEY") == 503  # there, if unwell: the run's retries take over


def test_url_checks_redaction_and_cache_identity():
    for bad in ("not a url", "ftp://host/v1", "http://", "http://host:99999/v1", "localhost:8000/v1"):
        with pytest.raises(RagdiagError, match=r"^base URL .* expected e\.g\. http://127\.0\.0\.1:8000/v1"):
            check_base_url(bad)
    assert redact_url("https://user:pw@h.example:8443/v1?api-key=abc&x") == "https://h.example:8443/v1?api-key=***&x"
    assert cache_url("http://LOCALHOST:8000/v1/?api-version=1") == "http://localhost:8000/v1"
    assert cache_url("https://api.openai.com/v1") == "https://api.openai.com:443/v1"
    assert len({cache_url(u) for u in ("http://h:8000/v1", "http://h:11434/v1", "http://h:8000/a/v1", "https://h:8000/v1")}) == 4


def test_base_url_query_parameters_stay_query_parameters(tmp_path):
    """Issue 18: an Azure-style ``…?api-version=…`` base URL: the SDK's paths go before the query,
    which goes with the endpoint check and with every request; the embedders too."""
    azure = "https://azure.example/openai/deployments/d1?api-version=2024-06-01"
    handler = Recorder(_chat("the answer"))
    with use_transport(httpx.MockTransport(handler)):
        client = LLMClient(ClientConfig(base_url=azure, cache_dir=tmp_path))
        assert client.chat(client.request([{"role": "user", "content": "q"}], "test@v1")).text == "the answer"
        client.close()
    check, post = handler.requests
    assert check.url.path == "/openai/deployments/d1/models" and post.url.path == "/openai/deployments/d1/chat/completions"
    assert dict(check.url.params) == dict(post.url.params) == {"api-version": "2024-06-01"}
    vectors = Recorder(httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0, 0.0]}], "usage": {}}))
    with use_transport(httpx.MockTransport(vectors)):
        load_embedder("openai:m", base_url=azure, cache_dir=tmp_path / "e").encode(["x"])
    assert vectors.posts[0].url.path == "/openai/deployments/d1/embeddings"
    assert dict(vectors.posts[0].url.params) == {"api-version": "2024-06-01"}


@pytest.mark.parametrize("url, key_env", [("http://alice:pw@127.0.0.1:8000/v1", "OPENAI_API_KEY"),
                                          ("https://token@api.example/v1", "OPENAI_API_KEY")])
def test_credentials_in_a_base_url_are_refused_saying_where_the_key_goes(url, key_env):
    with pytest.raises(RagdiagError) as caught:
        ClientConfig(base_url=url)
    message = str(caught.value)
    assert "holds a user name or password" in message and f"put the API key in ${key_env}" in message
    assert "pw" not in message and "token" not in message.split("holds")[0]
