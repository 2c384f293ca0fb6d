"""Fixtures of the batch tests: the tiny texts/ranked data and the local batch test server (127.0.0.1;
its replies are the test server's, not an LLM's). A module that needs another server defines its own
``server`` (tests/llm/test_client.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.tiny_data import write_tiny
from tests.servers.base import serving
from tests.servers.batch_server import BatchServer


@pytest.fixture()
def tiny(tmp_path) -> tuple[Path, Path]:
    return write_tiny(tmp_path / "data")


@pytest.fixture()
def server(monkeypatch):
    with serving(monkeypatch, BatchServer()) as srv:
        yield srv
