"""Concurrency against a one-slot server (issue 28 §3): the chat test server works on one request at
a time for 0.8 s (a queued request whose client gave up is still worked on, as llama.cpp's is); 4
workers, a 1.2 s timeout. Every item is answered, none is lost, retries stay bounded and what was
adapted is reported. Replies are the test server's, not an LLM's.

The times are the original 2 s service / 3 s timeout / 0.5–2 s backoff scaled by 0.4: only their
ratios shape the run (which queued requests outlive their timeout), and the 0.4 s margins still
dwarf a loopback request's latency on a loaded machine."""

from __future__ import annotations

import pytest

from ragdiag.answers.run_stats import run_details
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.concurrency import InFlightLimit
from ragdiag.llm.runner import run_items
from tests.servers.base import serving
from tests.servers.chat_server import ChatServer

ITEMS = ["alpha", "beta", "gamma"]
SERVICE_TIME = 0.8  # seconds per request in the server's one slot


@pytest.fixture()
def one_slot(monkeypatch):
    with serving(monkeypatch, ChatServer()) as server:
        yield server


def _run(server: ChatServer, items: list[str] = ITEMS):
    client = LLMClient(ClientConfig(model="test-model", base_url=server.base_url, cache="off", workers=4,
                                    timeout=1.5 * SERVICE_TIME, max_retries=5, backoff_base=SERVICE_TIME / 4,
                                    backoff_max=SERVICE_TIME))

    def ask(word: str) -> str:
        return client.chat(client.request([{"role": "user", "content": f"say {word}"}], "test", max_tokens=16)).text

    outcome = run_items(client, ask, items, items, "asking", progress=False)
    return client, outcome


def test_published_slots_cap_the_requests_in_flight(one_slot, capsys):
    """Two items are enough: sent together, the second would wait 2 service times (> the timeout) and be retried."""
    one_slot.slots(1, service_time=SERVICE_TIME, publish=True)
    client, outcome = _run(one_slot, ITEMS[:2])
    assert outcome.failures == [] and all(outcome.results) and len(outcome.results) == 2
    assert client.stats.retries == 0 and one_slot.requests == 2  # never more than the slot in flight
    report = run_details(client)["concurrency"]
    assert report["server_slots"] == 1 and report["in_flight"] == 1 and report["timeouts"] == 0
    assert "the server publishes 1 slot(s)" in capsys.readouterr().err


def test_timeouts_halve_the_requests_in_flight_and_lose_nothing(one_slot, capsys):
    one_slot.slots(1, service_time=SERVICE_TIME, publish=False)
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
