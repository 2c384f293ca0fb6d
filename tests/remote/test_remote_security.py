"""Issue 9, security of remote calls, through the real CLI: cache keys hold scheme, host, port and path
(two servers on one host never share answers or vectors), and credentials in a base URL are refused
up front (issue 18: the SDK would send them as HTTP Basic instead of the key) without ever reaching a
written file, the cache or a message."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer
from tests.servers.embeddings_server import EmbeddingsServer

SECRET = "s3cr3t-pw"


def cli(*args):
    return CliRunner().invoke(app, [*map(str, args)])


def with_credentials(base_url: str) -> str:
    return base_url.replace("http://", f"http://alice:{SECRET}@")


def assert_secret_nowhere(folder: Path, *texts: str) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"credentials written to {path}"
    for text in texts:
        assert SECRET not in text


@pytest.fixture()
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return write_tiny(tmp_path / "data")


def _generate(tmp_path, texts, ranked, base_url, out):
    return cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", out, "--base-url", base_url,
               "--cache-dir", tmp_path / "cache", "--no-progress")


def _answers(path: Path) -> list[str]:
    return [row["answer"] for row in map(json.loads, path.read_text().splitlines()) if "answer" in row]


def test_two_chat_servers_on_one_host_never_share_answers(tmp_path, tiny):
    texts, ranked = tiny
    with ChatServer(words_per_reference=3) as first, ChatServer(words_per_reference=5) as second:
        assert _generate(tmp_path, texts, ranked, first.base_url, tmp_path / "a.jsonl").exit_code == 0
        result = _generate(tmp_path, texts, ranked, second.base_url, tmp_path / "b.jsonl")
        assert result.exit_code == 0, result.stderr
        assert second.requests == first.requests > 0  # the second server was asked everything again
    assert _answers(tmp_path / "a.jsonl") != _answers(tmp_path / "b.jsonl")


def _refused_naming_the_key(result, key_env: str = "OPENAI_API_KEY") -> None:
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "holds a user name or password" in result.stderr and f"put the API key in ${key_env}" in result.stderr


def test_credentials_in_the_chat_base_url_are_refused_before_any_request(tmp_path, tiny):
    texts, ranked = tiny
    with ChatServer() as server:
        url = with_credentials(server.base_url)
        gen = _generate(tmp_path, texts, ranked, url, tmp_path / "a.jsonl")
        _refused_naming_the_key(gen)
        grade = cli("grade", "--answers", tmp_path / "a.jsonl", "--out", tmp_path / "g.json", "--base-url", url,
                    "--cache-dir", tmp_path / "cache", "--no-progress")
        assert grade.exit_code == 2
        assert server.requests == 0 and server.model_list_requests == 0
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "cache").exists()
    assert_secret_nowhere(tmp_path, gen.stdout, gen.stderr, grade.stdout, grade.stderr)


def test_credentials_never_reach_an_error_line(tmp_path, tiny):
    texts, ranked = tiny
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    result = _generate(tmp_path, texts, ranked, with_credentials(dead), tmp_path / "a.jsonl")
    _refused_naming_the_key(result)
    assert f"base URL '{dead}'" in result.stderr
    assert_secret_nowhere(tmp_path, result.stdout, result.stderr)


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"passage {i}"}) + "\n" for i in range(3)))
    return corpus


def _build(tmp_path, corpus, base_url, out):
    return cli("index", "build", "--corpus", corpus, "--out-dir", out, "--embedder", "openai:m", "--index-spec", "flat",
               "--base-url", base_url, "--cache-dir", tmp_path / "cache")


def test_two_embedding_servers_on_one_host_never_share_vectors_and_credentials_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus = _corpus(tmp_path)
    with EmbeddingsServer(dim=8) as first, EmbeddingsServer(dim=6) as second:
        refused = _build(tmp_path, corpus, with_credentials(first.base_url), tmp_path / "idx0")
        _refused_naming_the_key(refused)
        assert first.requests == 0 and not (tmp_path / "idx0").exists()
        one = _build(tmp_path, corpus, first.base_url, tmp_path / "idx1")
        assert one.exit_code == 0, one.stderr
        two = _build(tmp_path, corpus, second.base_url, tmp_path / "idx2")
        assert two.exit_code == 0, two.stderr
        assert first.texts_embedded == second.texts_embedded == 3
    assert_secret_nowhere(tmp_path, refused.stdout, refused.stderr)


def test_credentials_never_reach_the_run_record_argv_or_output_of_a_real_process(tmp_path, tiny):
    import os
    import subprocess
    import sys

    texts, ranked = tiny
    with ChatServer() as server:
        url = with_credentials(server.base_url)
        env = {**os.environ, "OPENAI_API_KEY": "test"}
        done = subprocess.run([sys.executable, "-c", "from ragdiag.cli import main; main()", "generate", "--texts", str(texts), "--ranked",
                               str(ranked), "--ks", "2", "--out", str(tmp_path / "a.jsonl"), f"--base-url={url}",
                               "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert server.requests == 0
    assert done.returncode == 2 and "put the API key in $OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "a.jsonl").exists()
    assert_secret_nowhere(tmp_path, done.stdout, done.stderr)
