"""Issue 9, server faults, through the real CLI against the local test servers (127.0.0.1):
malformed 200 replies fail their item only (listed in the manifest, never cached), non-finite judge
grades are unparseable, bad --timeout / --base-url values, a dead server, a refused key.
Every failure: exit 2 (3 for coverage), exactly one stderr line naming the problem, no traceback,
inputs byte-identical, no partial output."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.remote.call_cache import CACHE_FILE, CallCache
from ragdiag.remote.retry import RetryPolicy
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer
from tests.servers.embeddings_server import EmbeddingsServer


@pytest.fixture()
def backoffs(monkeypatch) -> list[float]:
    """The waits the retry policy asks for, recorded and not slept (a bad reply gets the 1–2 s backoff of
    the first retry, which would only make the test wait)."""
    asked: list[float] = []
    policy_wait = RetryPolicy.wait

    def wait(self, retry, err, rng=None):
        asked.append(policy_wait(self, retry, err) if rng is None else policy_wait(self, retry, err, rng))
        return 0.0

    monkeypatch.setattr(RetryPolicy, "wait", wait)
    return asked


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    snapshot = {p: p.read_bytes() for p in (texts, ranked)}
    yield tmp_path, texts, ranked
    assert {p: p.read_bytes() for p in snapshot} == snapshot, "an input changed"


def run(tmp_path: Path, *args: str):
    full = [*map(str, args), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    return CliRunner().invoke(app, full)


def one_error_line(result, code: int, pattern: str) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert lines[0].startswith("ragdiag: error: ") and re.search(pattern, lines[0]), lines[0]
    return lines[0]


def generate(tmp_path, texts, ranked, base_url, *extra):
    return run(tmp_path, "generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", tmp_path / "a.jsonl",
               "--base-url", base_url, "--workers", "1", *extra)


@pytest.mark.parametrize("kind,reason", [("not-json", "not JSON"), ("html", "an HTML page"), ("empty", "not JSON"),
                                         ("no-choices", "no choices"), ("content-null", "content is null")])
def test_malformed_200_fails_one_item_is_listed_and_never_cached(env, kind, reason):
    tmp_path, texts, ranked = env
    with ChatServer() as server:
        server.malformed_next(kind)
        first = generate(tmp_path, texts, ranked, server.base_url, "--max-retries", "0")
        one_error_line(first, 3, r"coverage 0\.875 \(7 of 8 items\) is below --min-coverage 0\.95")
        manifest = json.loads((tmp_path / "a.jsonl.manifest.json").read_text())
        assert len(manifest["failures"]) == 1 and reason in manifest["failures"][0]["error"]
        assert manifest["failures"][0]["error"].startswith("bad reply: ")
        rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
        assert all(r.get("answer") != "" for r in rows)  # no empty answer stands in for the failure
        cache = CallCache(tmp_path / "cache" / CACHE_FILE)
        replies = [entry["reply"] for entry in cache.export()]
        cache.close()
        assert len(replies) == server.requests - 1 == 7  # every request but the malformed one
        assert all(reply.startswith("From the references: ") for reply in replies)
        (tmp_path / "a.jsonl").unlink()
        again = generate(tmp_path, texts, ranked, server.base_url)
        assert again.exit_code == 0, again.stderr


def test_malformed_reply_is_retried_like_a_5xx(env, backoffs):
    tmp_path, texts, ranked = env
    with ChatServer() as server:
        server.malformed_next("no-choices")
        server.fail_next(503, retry_after=0)
        result = generate(tmp_path, texts, ranked, server.base_url, "--max-retries", "2")
        assert result.exit_code == 0, result.stderr
        assert server.statuses[:3] == [503, 200, 200]  # ideal M-1: a 503, a 200 without choices, then its answer
        assert backoffs[0] == 0 and 2 <= backoffs[1] < 4  # Retry-After: 0, then the second retry's backoff
        assert json.loads((tmp_path / "a.jsonl.manifest.json").read_text())["failures"] == []


@pytest.mark.parametrize("grade", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_judge_grade_is_unparseable_then_null_and_reruns_do_not_crash(env, grade):
    tmp_path, texts, ranked = env
    with ChatServer() as server:
        assert generate(tmp_path, texts, ranked, server.base_url).exit_code == 0
        server.script_judge(f'{{"grade": {grade}}}', f'{{"grade": {grade}}}')  # the reply and its repair
        graded = tmp_path / "g.json"
        args = ("grade", "--answers", tmp_path / "a.jsonl", "--out", graded, "--base-url", server.base_url,
                "--workers", "1", "--min-coverage", "0.5")
        first = run(tmp_path, *args)
        assert first.exit_code == 0, first.stderr
        records = json.loads(graded.read_text())
        assert sum(r["grade"] is None for r in records) == 1
        sent = server.requests
        rerun = run(tmp_path, *args, "--no-retry-unparsed")  # the cached non-finite reply is parsed again, not crashed on
        assert rerun.exit_code == 0, rerun.stderr
        assert server.requests == sent and json.loads(graded.read_text()) == records
        retry = run(tmp_path, *args)  # by default the unparsed item is asked again (the judge now answers)
        assert retry.exit_code == 0 and server.requests == sent + 1 and "retried 1 item(s)" in retry.stderr
        assert all(r["grade"] is not None for r in json.loads(graded.read_text()))


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf"])
def test_bad_timeout_says_what_is_wrong(env, value):
    tmp_path, texts, ranked = env
    result = generate(tmp_path, texts, ranked, "http://127.0.0.1:9/v1", "--timeout", value)
    one_error_line(result, 2, r"timeout")
    assert not (tmp_path / "a.jsonl").exists()


@pytest.mark.parametrize("url", ["not a url", "127.0.0.1:8000/v1", "ftp://127.0.0.1/v1", "http://127.0.0.1:99999/v1"])
def test_bad_base_url_says_what_is_wrong(env, url):
    tmp_path, texts, ranked = env
    one_error_line(generate(tmp_path, texts, ranked, url), 2, r"base URL .*expected e\.g\. http://127\.0\.0\.1:8000/v1")
    assert not (tmp_path / "a.jsonl").exists()


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_dead_server_fails_in_seconds_naming_the_url(env):
    tmp_path, texts, ranked = env
    url = _dead_url()
    line = one_error_line(generate(tmp_path, texts, ranked, url), 2, r"cannot reach ")
    assert url in line and "is the server running" in line
    assert not (tmp_path / "a.jsonl").exists()


def test_refused_key_says_so(env):
    tmp_path, texts, ranked = env
    with ChatServer(api_key="the-right-key") as server:
        one_error_line(generate(tmp_path, texts, ranked, server.base_url), 2,
                       r"refused the API key \(HTTP 401\); check \$OPENAI_API_KEY")
        assert server.requests == 0 and server.model_list_requests == 1


def test_fully_cached_and_replay_runs_never_check_the_endpoint(env):
    tmp_path, texts, ranked = env
    with ChatServer() as server:
        assert generate(tmp_path, texts, ranked, server.base_url).exit_code == 0
        url = server.base_url
    (tmp_path / "a.jsonl").unlink()
    for extra in ((), ("--cache", "replay")):
        result = generate(tmp_path, texts, ranked, url, *extra)  # the server is gone: the cache answers
        assert result.exit_code == 0, result.stderr


def test_server_failing_always_stops_with_one_line(env):
    tmp_path, texts, ranked = env
    with ChatServer() as server:
        server.fail_always(500, retry_after=0)
        result = generate(tmp_path, texts, ranked, server.base_url, "--max-retries", "1")
        line = one_error_line(result, 3, r"coverage 0\.000")
        assert "listed in" in line


def test_embedding_server_html_reply_is_retried_then_embeds(tmp_path, monkeypatch, backoffs):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"passage {i} text"}) + "\n"
                              for i in range(4)))
    with EmbeddingsServer(dim=8) as server:
        server.malformed_next("html")
        result = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--out-dir", str(tmp_path / "idx"),
                                          "--embedder", "openai:m", "--index-spec", "flat", "--base-url", server.base_url,
                                          "--cache-dir", str(tmp_path / "cache")])
        assert result.exit_code == 0, result.stderr
        assert server.statuses == [200, 200] and server.texts_embedded == 4
        assert len(backoffs) == 1 and 1 <= backoffs[0] < 2  # the first retry's backoff, 1 s plus jitter
