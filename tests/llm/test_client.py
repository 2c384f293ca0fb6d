"""The cached client against the local chat server: retries, Retry-After, replay, dedup, limits, prices."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import CallFailed, ClientConfig, LLMClient
from ragdiag.llm.prices import call_cost, load_prices
from ragdiag.llm.prompts import load_prompt
from ragdiag.llm.ratelimit import RateLimiter
from tests.servers.chat_server import ChatServer


@pytest.fixture()
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ChatServer() as srv:
        yield srv


def _client(server, tmp_path, sleeps: list | None = None, **kw) -> LLMClient:
    kw.setdefault("backoff_base", 0.01)
    config = ClientConfig(base_url=server.base_url, cache_dir=tmp_path, **kw)
    return LLMClient(config) if sleeps is None else LLMClient(config, sleep=sleeps.append)


def _ask(client: LLMClient, text: str = "hello", repeat: int | None = None):
    return client.chat(client.request([{"role": "user", "content": text}], "test@v1", repeat=repeat))


def test_rw_cache_hit_sends_nothing_and_keeps_tokens(server, tmp_path):
    client = _client(server, tmp_path)
    first = _ask(client)
    second = _ask(client)
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "test server reply"
    assert server.requests == 1
    assert client.stats.calls == 1 and client.stats.cache_hits == 1
    assert client.stats.prompt_tokens == 1 and second.prompt_tokens == 1
    body = server.bodies[0]
    assert body["temperature"] == 0.0 and body["seed"] == 0 and body["model"] == "gpt-4o-mini"
    _ask(client, repeat=1)  # the repeat index is part of the key
    assert server.requests == 2


def test_429_with_retry_after_then_success(server, tmp_path):
    server.fail_next(429, times=2, retry_after=0.3)
    sleeps: list[float] = []
    client = _client(server, tmp_path, sleeps, backoff_base=5.0)  # a 5 s backoff would show if Retry-After were ignored
    assert _ask(client).text == "test server reply"
    assert sleeps == [0.3, 0.3]
    assert client.stats.retries == 2 and server.statuses == [429, 429, 200]


def test_500_forever_fails_after_retry_budget_and_caches_nothing(server, tmp_path):
    server.fail_always(500)
    client = _client(server, tmp_path, max_retries=3)
    with pytest.raises(CallFailed, match=r"HTTP 500.*after 3 retries"):
        _ask(client)
    assert server.requests == 4 and client.stats.failures == 1 and client.stats.retries == 3
    assert client.cache.stats()["entries"] == 0  # errors are never cached
    server.fail_always(None)
    assert _ask(client).cached is False


def test_5xx_without_retry_after_backs_off_exponentially(server, tmp_path):
    server.fail_next(503, times=3)
    sleeps: list[float] = []
    client = _client(server, tmp_path, sleeps, backoff_base=0.1)
    assert _ask(client).text == "test server reply"
    # waits 0.1·2^0, 0.1·2^1, 0.1·2^2 plus up to 0.1 s jitter each
    assert len(sleeps) == 3 and client.stats.retries == 3
    for wait, base in zip(sleeps, (0.1, 0.2, 0.4)):
        assert base <= wait <= base + 0.1


def test_timeouts_are_retried_then_fail(server, tmp_path):
    server.latency = 0.5
    client = _client(server, tmp_path, timeout=0.1, max_retries=1)
    with pytest.raises(CallFailed, match="APITimeoutError.*after 1 retries"):
        _ask(client)
    assert client.stats.retries == 1 and client.cache.stats()["entries"] == 0


def test_non_retryable_client_error_is_not_retried(server, tmp_path):
    server.fail_next(400)
    client = _client(server, tmp_path)
    with pytest.raises(CallFailed, match="not retryable"):
        _ask(client)
    assert server.requests == 1
    server.fail_next(401)
    with pytest.raises(RagdiagError, match="refused"):
        _ask(client, "other")


def test_replay_never_touches_network_and_names_the_missing_request(server, tmp_path):
    _ask(_client(server, tmp_path))
    replay = _client(server, tmp_path, cache="replay")
    assert _ask(replay).cached
    with pytest.raises(RagdiagError, match=r"--cache replay: no cached reply for request [0-9a-f]{16} \(prompt test@v1"):
        _ask(replay, "never seen")
    assert server.requests == 1


def test_refresh_and_off_modes(server, tmp_path):
    _ask(_client(server, tmp_path))
    refresh = _client(server, tmp_path, cache="refresh")
    assert _ask(refresh).cached is False and server.requests == 2
    assert _ask(refresh).cached is True and server.requests == 2  # re-asked once per run, not per use
    off = LLMClient(ClientConfig(base_url=server.base_url, cache="off"))
    assert off.cache is None and _ask(off).cached is False and server.requests == 3


def test_missing_key_is_an_error_only_when_the_cache_cannot_answer(server, tmp_path, monkeypatch):
    _ask(_client(server, tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY")
    client = _client(server, tmp_path)
    assert _ask(client).cached
    with pytest.raises(RagdiagError, match="OPENAI_API_KEY is not set"):
        _ask(client, "new question")


def test_identical_requests_in_flight_are_sent_once(server, tmp_path):
    server.latency = 0.2
    client = _client(server, tmp_path, workers=8)
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: _ask(client).text, range(8)))
    assert set(replies) == {"test server reply"}
    assert server.requests == 1
    assert client.stats.calls == 1 and client.stats.shared + client.stats.cache_hits == 7


def test_bad_cache_mode_and_provider(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert ClientConfig().provider == "https://api.openai.com:443/v1"
    with pytest.raises(RagdiagError, match="--cache must be one of"):
        ClientConfig(cache="sometimes")
    assert ClientConfig(base_url="http://127.0.0.1:8000/v1/").provider == "http://127.0.0.1:8000/v1"
    assert ClientConfig(base_url="HTTP://Host/v1").provider == "http://host:80/v1"
    with pytest.raises(RagdiagError, match=r"holds a user name or password: .* put the API key in \$OPENAI_API_KEY"):
        ClientConfig(base_url="HTTP://u:pw@Host/v1")


def test_rate_limiter_spaces_requests_per_minute():
    now = [0.0]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(rpm=2, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        limiter.acquire()
    assert sleeps == [60.0]
    tokens = RateLimiter(tpm=100, clock=lambda: now[0], sleep=sleep)
    tokens.acquire(80)
    now[0] += 10
    tokens.acquire(30)  # 110 > 100: waits until the first call leaves the window
    assert sleeps[-1] == pytest.approx(50.0)


def test_prices_default_override_and_unknown(tmp_path, monkeypatch):
    prices = load_prices()
    assert call_cost(prices, "gpt-4o-mini", 1_000_000, 0) == prices["gpt-4o-mini"]["input"]
    assert call_cost(prices, "local-llama", 10, 10) is None
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"local-llama": {"input": 1.0, "output": 2.0}}))
    monkeypatch.setenv("RAGDIAG_PRICES", str(table))
    assert call_cost(load_prices(), "local-llama", 1_000_000, 1_000_000) == 3.0
    table.write_text(json.dumps({"x": {"input": "cheap"}}))
    with pytest.raises(RagdiagError, match="model 'x'"):
        load_prices(table)


def test_unpriced_model_reports_cost_as_unknown(server, tmp_path):
    client = _client(server, tmp_path, model="local-llama")
    _ask(client)
    assert client.stats.cost is None


def test_prompts_are_versioned_and_filled():
    assert load_prompt("grading").id.startswith("grading@v")  # the latest version by default
    grading = load_prompt("grading", 1)
    assert grading.id == "grading@v1"
    messages = grading.messages(query="q?", ideal="I", candidate="C")
    assert messages[0]["role"] == "system" and '{"grade"' in messages[0]["content"]
    assert "Ideal answer:\nI" in messages[1]["content"]
    with pytest.raises(RagdiagError, match="placeholder"):
        grading.messages(query="q")
    with pytest.raises(RagdiagError, match="no version 9"):
        load_prompt("generation", 9)
    assert [m["role"] for m in load_prompt("grading-repair").messages()] == ["user"]


@pytest.mark.parametrize("entry, needle", [
    ('{"m": {"input": NaN, "output": 1}}', "model 'm': field 'input': nan is not a finite price >= 0"),
    ('{"m": {"input": 1, "output": -0.5}}', "model 'm': field 'output': -0.5 is not a finite price >= 0"),
    ('{"m": {"input": Infinity, "output": 1}}', "field 'input': inf is not a finite price"),
    ('{"m": {"input": true, "output": 1}}', "model 'm': expected"),
    ("[" * 100_000 + "]" * 100_000, "cannot read the price table (JSON nested too deeply)"),
])
def test_prices_must_be_finite_and_non_negative(tmp_path, entry, needle):
    table = tmp_path / "prices.json"
    table.write_text(entry)
    with pytest.raises(RagdiagError, match=re.escape(needle)):
        load_prices(table)


def test_nan_price_is_one_line_before_any_call(server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragdiag.cli import app
    from tests.pipeline.tiny_data import write_tiny

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    texts, ranked = write_tiny(tmp_path / "data")
    table = tmp_path / "prices.json"
    table.write_text('{"gpt-4o-mini": {"input": NaN, "output": 0.6}}')
    before = server.requests
    result = CliRunner().invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--ks", "2", "--out",
                                      str(tmp_path / "a.jsonl"), "--base-url", server.base_url, "--prices", str(table),
                                      "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "field 'input': nan is not a finite price >= 0" in result.stderr
    assert server.requests == before and not (tmp_path / "a.jsonl").exists()


def test_two_processes_sharing_one_cache_send_each_request_once(tmp_path):
    """Issue 18: two real processes, one cache, a slow test server (1.5 s a reply, every request in
    flight at once): the lease row makes the second wait for the first's replies instead of paying
    again. The server counts the requests."""
    import os
    import subprocess
    import sys

    from ragdiag.remote.call_cache import CACHE_FILE, CallCache
    from tests.pipeline.tiny_data import write_tiny

    texts, ranked = write_tiny(tmp_path / "data")
    env = {**os.environ, "OPENAI_API_KEY": "test"}
    env.pop("OPENAI_BASE_URL", None)
    with ChatServer(latency=1.5) as server:
        procs = [subprocess.Popen([sys.executable, "-c", "from ragdiag.cli import main; main()", "generate",
                                   "--texts", str(texts), "--ranked", str(ranked), "--ks", "2,3", "--out",
                                   str(tmp_path / f"a{i}.jsonl"), "--base-url", server.base_url, "--workers", "16",
                                   "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(2)]
        outputs = [proc.communicate(timeout=300) for proc in procs]
        sent = server.requests
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    cache = CallCache(tmp_path / "cache" / CACHE_FILE)
    unique = sum(1 for _ in cache.export())
    leases = cache.store.query("SELECT COUNT(*) FROM leases")[0][0]
    cache.close()
    summaries = [json.loads((tmp_path / f"a{i}.jsonl.manifest.json").read_text())["summary"] for i in range(2)]
    assert sent == unique == sum(s["calls"] for s in summaries)  # each distinct request paid for once
    assert sum(s["from_other_process"] for s in summaries) > 0  # the runs overlapped: one waited for the other
    assert leases == 0  # every lease released
    assert (tmp_path / "a0.jsonl").read_text().splitlines()[1:] == (tmp_path / "a1.jsonl").read_text().splitlines()[1:]


def test_a_lease_left_by_a_killed_process_is_taken_over(tmp_path):
    from ragdiag.remote.call_cache import CallCache

    cache = CallCache(tmp_path / "c.sqlite")
    cache.store.execute("INSERT INTO leases VALUES (?, ?, ?, ?, ?)", ("k", "dead", __import__("socket").gethostname(),
                                                                       2**22 + 12345, 1e12))  # no such pid
    assert cache.take_lease("k", "me", 60) and not cache.take_lease("k", "other", 60)
    cache.drop_lease("k", "me")
    assert cache.take_lease("k", "other", 60)
    cache.close()
