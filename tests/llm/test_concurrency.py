"""Concurrency against a one-slot server (issue 28 §3): the chat test server works on one request at
a time for 2 s (a queued request whose client gave up is still worked on, as llama.cpp's is); 4
workers, a 3 s timeout. Every item is answered, none is lost, retries stay bounded and what was
adapted is reported. Replies are the test server's, not an LLM's."""

from __future__ import annotations

import pytest

from ragdiag.answers.run_stats import run_details
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.concurrency import InFlightLimit
from ragdiag.llm.runner import run_items
from tests.servers.chat_server import ChatServer

ITEMS = ["alpha", "beta", "gamma"]


@pytest.fixture()
def one_slot(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChatServer() as server:
        yield server


def _run(server: ChatServer):
    client = LLMClient(ClientConfig(model="test-model", base_url=server.base_url, cache="off", workers=4,
                                    timeout=3.0, max_retries=5, backoff_base=0.5, backoff_max=2.0))

    def ask(word: str) -> str:
        return client.chat(client.request([{"role": "user", "content": f"say {word}"}], "test", max_tokens=16)).text

    outcome = run_items(client, ask, ITEMS, ITEMS, "asking", progress=False)
    return client, outcome


def test_published_slots_cap_the_requests_in_flight(one_slot, capsys):
    one_slot.slots(1, service_time=2.0, publish=True)
    client, outcome = _run(one_slot)
    assert outcome.failures == [] and all(outcome.results)
    assert client.stats.retries == 0 and one_slot.requests == len(ITEMS)  # never more than the slot in flight
    report = run_details(client)["concurrency"]
    assert report["server_slots"] == 1 and report["in_flight"] == 1 and report["timeouts"] == 0
    assert "the server publishes 1 slot(s)" in capsys.readouterr().err


def test_timeouts_halve_the_requests_in_flight_and_lose_nothing(one_slot, capsys):
    one_slot.slots(1, service_time=2.0, publish=False)
    client, outcome = _run(one_slot)
    assert outcome.failures == [] and all(outcome.results)  # every item answered, none lost
    assert 1 <= client.stats.retries <= 6 and client.stats.failures == 0  # bounded
    report = run_details(client)["concurrency"]
    assert report["server_slots"] is None and report["in_flight"] == 1 and report["timeouts"] == client.stats.retries
    assert report["adapted"][0] == "timeout: 4 → 2 request(s) in flight"
    assert "timeout: 4 → 2 request(s) in flight" in capsys.readouterr().err


def test_the_limit_never_drops_below_one():
    limit = InFlightLimit(3)

    class APITimeoutError(Exception):
        pass

    for _ in range(4):
        limit.after_error(APITimeoutError())
    limit.after_error(ValueError())
    assert limit.limit == 1 and limit.timeouts == 4 and limit.events == ["timeout: 3 → 1 request(s) in flight"]
