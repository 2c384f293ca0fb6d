"""The seam below the LLM cache: every backend answers ``send(request, key) → Reply`` and the cached layer
(:class:`ragdiag.llm.client.LLMClient`) does the rest. Each backend is driven through the seam here, and a
test double plugged in with :func:`ragdiag.llm.backends.use_backend` — the chat and fault test servers'
reply logic called in process, no HTTP and no API key — serves ``generate``, ``grade`` and ``triage``
(its replies are the test servers', marked as such, never an LLM's)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.io.provenance import TEST_SERVER_MARK
from ragdiag.llm.backends import BatchBackend, OpenAIBackend, Reply, completion_reply, use_backend
from ragdiag.llm.batch import Deferred
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.remote.call_cache import request_key
from ragdiag.remote.retry import CallFailed
from ragdiag.resources import resource_path
from tests.pipeline.tiny_data import write_tiny
from tests.servers.batch_server import BatchServer
from tests.servers.chat_server import ChatServer
from tests.servers.fault_server import FaultServer, load_model


class InProcess:
    """A test double backend: a test server's reply logic, called without HTTP."""

    defers = False

    def __init__(self, server: ChatServer) -> None:
        self.server, self.sent = server, 0

    def send(self, request: dict[str, Any], key: str) -> Reply:
        self.sent += 1
        status, body = self.server.reply({"model": request["model"], "messages": request["messages"], **request["params"]})
        if status != 200:
            raise CallFailed(f"the in-process test server answered {status}")
        return completion_reply(body, request, "the in-process test server")

    def close(self) -> None:
        return None


def _ask(client: LLMClient, text: str = "hello") -> Any:
    return client.chat(client.request([{"role": "user", "content": text}], "test@v1"))


def test_the_openai_backend_answers_through_the_seam_and_the_client_caches_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as server:
        client = LLMClient(ClientConfig(base_url=server.base_url, cache_dir=tmp_path))
        assert isinstance(client.backend, OpenAIBackend)
        request = client.request([{"role": "user", "content": "hello"}], "test@v1")
        reply = client.backend.send(request, request_key(request))
        assert reply == Reply("test server reply", 1, 3, TEST_SERVER_MARK, False) and server.requests == 1
        first, second = _ask(client), _ask(client)
        assert (first.text, first.cached, second.cached) == ("test server reply", False, True)
        assert server.requests == 2 and client.stats.calls == 1 and client.stats.cache_hits == 1
        client.close()


def test_a_plugged_backend_gets_the_same_request_and_key_and_gives_the_same_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as server:
        live = LLMClient(ClientConfig(base_url=server.base_url, cache_dir=tmp_path / "live"))
        double = InProcess(ChatServer())
        plugged = LLMClient(ClientConfig(base_url=server.base_url, cache_dir=tmp_path / "double"), backend=double)
        got, want = _ask(plugged, "What is the capital?"), _ask(live, "What is the capital?")
        assert (got.key, got.text, got.prompt_tokens, got.completion_tokens, got.origin) == \
            (want.key, want.text, want.prompt_tokens, want.completion_tokens, want.origin)
        assert double.sent == 1 and server.requests == 1 and plugged.stats.calls == 1
        live.close()
        plugged.close()


def test_the_batch_backend_defers_through_the_seam_and_flushes_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BatchServer() as server:
        client = LLMClient(ClientConfig(base_url=server.base_url, cache_dir=tmp_path, batch="openai",
                                        batch_dir=tmp_path / "batch", batch_poll=0.01), sleep=lambda _: None)
        assert isinstance(client.backend, BatchBackend) and client.batch is client.backend.runner
        with pytest.raises(Deferred):
            _ask(client)
        assert client.stats.requests == 0  # counted when the item runs again
        client.flush_batch(progress=False)
        again = _ask(client)
        assert again.text and client.stats.batch_calls == 1 and client.stats.calls == 1
        client.close()


def test_a_test_backend_serves_generate_and_grade_without_a_server_or_a_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the SDK backend could not send: only the double answers
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    double = InProcess(ChatServer())
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    common = ["--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    with use_backend(lambda config: double):
        done = CliRunner().invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--k", "2,5",
                                        "--out", str(answers), *common])
        assert done.exit_code == 0, done.output
        generated = double.sent
        done = CliRunner().invoke(app, ["grade", "--answers", str(answers), "--out", str(graded), *common])
        assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    assert generated == len({(r["id"], r.get("K")) for r in rows[1:]}) - 1  # one top-K asks the ideal request
    records = json.loads(graded.read_text())
    assert len(records) == double.sent - generated == 8 and all(r["grade"] in (1, 2, 3, 4, 5) for r in records)
    manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["calls"] == 8


def test_a_test_backend_serves_triage(tmp_path, monkeypatch):
    """Two queries of each injected fault of the synthetic set (and two answered well), triaged through the fault model called in process:
    the primary cause found is the injected one, every call paid went through the plugged backend."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    fixture = resource_path("fixtures", "triage-synthetic")
    faults = {r["query_id"]: r["fault"] for r in map(json.loads, (fixture / "faults.jsonl").read_text().splitlines())}
    chosen: dict[str, list[str]] = {}
    for query, fault in faults.items():
        if int(query[1:]) > 300:  # the six later fault types need --repeats or name other causes (tests/triage)
            continue
        if len(chosen.setdefault(fault, [])) < 2:
            chosen[fault].append(query)
    keep = {q for ids in chosen.values() for q in ids}
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(line + "\n" for line in (fixture / "queries.jsonl").read_text().splitlines()
                               if json.loads(line)["_id"] in keep))
    double = InProcess(FaultServer(load_model(fixture / "model.json")))
    out = tmp_path / "out"
    with use_backend(lambda config: double):
        done = CliRunner().invoke(app, ["triage", "--corpus", str(fixture), "--queries", str(queries), "--answers",
                                        str(fixture / "answers.jsonl"), "--model", "test-model", "--out-dir", str(out),
                                        "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert {r["id"] for r in rows} == keep
    assert all(r["cause"] == faults[r["id"]] for r in rows if faults[r["id"]] != "ok")
    assert all(not r["triaged"] for r in rows if faults[r["id"]] == "ok")  # answered well: nothing to triage
    assert double.sent == sum(r["calls"] for r in rows) > 0


def test_use_backend_is_undone_after_its_block(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with use_backend(lambda config: InProcess(ChatServer())):
        assert isinstance(LLMClient(ClientConfig(cache="off")).backend, InProcess)
    assert isinstance(LLMClient(ClientConfig(cache="off")).backend, OpenAIBackend)


