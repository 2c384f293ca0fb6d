"""Fixtures for LLM pipeline tests: tiny data, a running chat server, and a CLI runner helper."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.pipeline.tiny_data import write_tiny
from tests.servers.base import serving
from tests.servers.chat_server import ChatServer


@pytest.fixture()
def tiny(tmp_path) -> tuple[Path, Path]:
    return write_tiny(tmp_path / "data")


@pytest.fixture()
def server(monkeypatch):
    with serving(monkeypatch, ChatServer()) as srv:
        yield srv


@pytest.fixture()
def run_cli(tmp_path):
    """Invoke ``ragdiag ARGS --cache-dir tmp --no-progress``; returns the click Result."""

    def invoke(*args: str, cache_dir: Path | None = None):
        full = [*map(str, args)]
        if full[0] != "correlate":
            full += ["--cache-dir", str(cache_dir or tmp_path / "cache"), "--no-progress"]
        return CliRunner().invoke(app, full)

    return invoke
