"""The judged loop's tests share one fixture: the plain chat test server on 127.0.0.1 (its replies and grades
are the test server's, never an LLM's), with the dummy key the openai client needs."""

from __future__ import annotations

import pytest

from tests.servers.base import serving
from tests.servers.chat_server import ChatServer


@pytest.fixture()
def server(monkeypatch):
    with serving(monkeypatch, ChatServer()) as srv:
        yield srv
