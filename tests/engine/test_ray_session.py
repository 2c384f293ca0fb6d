"""Connecting to Ray (:mod:`ragdiag.engine.ray_session`), issue 44: an address that answers but is not a
Ray cluster (any HTTP port) is one line within a bounded time, not minutes of Ray's retries; a local
instance started for the run listens on loopback only and needs no check task."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from ragdiag.engine import ray_session
from ragdiag.errors import RagdiagError
from tests.servers.chat_server import ChatServer


@pytest.fixture()
def http_port():
    with ChatServer() as server:  # an HTTP/1.1 server: it answers, but speaks no Ray
        yield int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def test_an_http_port_is_not_a_ray_cluster(http_port):
    start = time.perf_counter()
    with pytest.raises(RagdiagError, match=rf"--ray-address 127\.0\.0\.1:{http_port}: .*not a Ray cluster"):
        ray_session.check_reachable(f"127.0.0.1:{http_port}")
    assert time.perf_counter() - start < ray_session.CONNECT_TIMEOUT_S + ray_session.HANDSHAKE_TIMEOUT_S + 5


def test_the_command_says_so_in_one_line(http_port, tmp_path):
    from ragdiag.cli import app

    pytest.importorskip("ray")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": "two"}\n')
    start = time.perf_counter()
    done = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--out-dir", str(tmp_path / "idx"),
                                    "--embedder", "local", "--engine", "ray", "--ray-address",
                                    f"127.0.0.1:{http_port}", "--cache-dir", str(tmp_path / "c")])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.exit_code == 2 and len(lines) == 1 and "not a Ray cluster" in lines[0], done.output
    assert time.perf_counter() - start < 60 and not (tmp_path / "idx").exists()


def test_the_check_task_allows_for_a_loaded_machine():
    assert ray_session.CHECK_TIMEOUT_S >= 600


class _FakeRay:
    """Records what a local start sees (no Ray process is started)."""

    def __init__(self):
        self.seen = None
        self._private = type("P", (), {"ray_constants": type("C", (), {"ENABLE_RAY_CLUSTER": True})()})()

    def init(self, **kwargs):
        import os

        self.seen = (os.environ.get(ray_session.LOOPBACK_ENV), self._private.ray_constants.ENABLE_RAY_CLUSTER)

    def get_runtime_context(self):
        return type("R", (), {"gcs_address": "127.0.0.1:1"})()


def test_a_local_instance_is_started_on_loopback_only_and_needs_no_check(monkeypatch):
    monkeypatch.delenv(ray_session.LOOPBACK_ENV, raising=False)
    fake = _FakeRay()
    session = ray_session.RaySession._connect(fake, "local")
    assert fake.seen == ("0", False)  # Ray's single-machine mode while it starts: every process on 127.0.0.1
    assert ray_session.LOOPBACK_ENV not in __import__("os").environ  # restored after
    assert fake._private.ray_constants.ENABLE_RAY_CLUSTER is True
    assert session.started
    session.check_packages(["a_module_that_does_not_exist"])  # this interpreter's packages: no task sent
