"""OpenAI-compatible chat client behind the call cache, with retries, rate limits and stats.

Works with any server speaking the chat-completions API (OpenAI, vLLM, Ollama, llama.cpp):
``base_url`` from the flag or ``$OPENAI_BASE_URL``, key from ``$OPENAI_API_KEY`` (needed only when
the cache cannot answer). Temperature 0 and a fixed seed by default. Retries with exponential
backoff (tenacity) on 429, 5xx, timeouts and connection errors, honouring ``Retry-After``.
Identical requests in flight at the same time are sent once.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.llm.cache import CACHE_FILE, CallCache, request_key
from ragdiag.llm.prices import call_cost, load_prices
from ragdiag.llm.ratelimit import RateLimiter

CACHE_MODES = ("rw", "replay", "off", "refresh")
DEFAULT_MODEL = "gpt-4o-mini"


class CallFailed(Exception):
    """One request failed for good (retry budget spent or a non-retryable error); never cached."""


@dataclass
class ClientConfig:
    """How to reach the server and how to use the cache (the flags shared by all LLM commands)."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    cache_dir: Path | None = None
    cache: str = "rw"
    workers: int = 4
    seed: int = 0
    temperature: float = 0.0
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    timeout: float = 120.0
    rpm: int | None = None
    tpm: int | None = None
    prices: Path | None = None

    def __post_init__(self) -> None:
        if self.cache not in CACHE_MODES:
            raise RagdiagError(f"--cache must be one of {', '.join(CACHE_MODES)}, got '{self.cache}'")
        if self.workers < 1:
            raise RagdiagError(f"--workers must be at least 1, got {self.workers}")
        self.base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    @property
    def provider(self) -> str:
        """Cache-key provider: the server's host name (no port), ``api.openai.com`` by default."""
        return urlparse(self.base_url).hostname or self.base_url if self.base_url else "api.openai.com"


@dataclass
class CallStats:
    """Counters for one client's lifetime; ``cost`` is None once any call had no price."""

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    shared: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ChatResult:
    """A reply and where it came from."""

    text: str
    key: str
    cached: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class LLMClient:
    """Cached chat completions; one instance is shared by all worker threads of a run."""

    config: ClientConfig
    stats: CallStats = field(default_factory=CallStats)

    def __post_init__(self) -> None:
        cfg = self.config
        self.cache = None if cfg.cache == "off" else CallCache(resolve_cache_dir(cfg.cache_dir) / CACHE_FILE)
        self.prices = load_prices(cfg.prices)
        self.limiter = RateLimiter(cfg.rpm, cfg.tpm)
        self._lock = threading.Lock()
        self._inflight: dict[str, Future] = {}
        self._sent: set[str] = set()
        self._sdk = None

    def request(self, messages: list[dict[str, str]], prompt: str, model: str | None = None,
                json_reply: bool = False, repeat: int | None = None) -> dict[str, Any]:
        """The full request whose sorted JSON is hashed for the cache key."""
        params: dict[str, Any] = {"temperature": self.config.temperature, "seed": self.config.seed}
        if json_reply:
            params["response_format"] = {"type": "json_object"}
        req = {"provider": self.config.provider, "model": model or self.config.model, "messages": messages,
               "params": params, "prompt": prompt}
        if repeat is not None:
            req["repeat"] = repeat
        return req

    def _lookup(self, key: str) -> ChatResult | None:
        """A cached reply if this cache mode may read it (``refresh`` reads only what this run sent)."""
        if self.cache is None or (self.config.cache == "refresh" and key not in self._sent):
            return None
        hit = self.cache.get(key)
        if hit is None:
            return None
        with self._lock:
            self.stats.cache_hits += 1
        return ChatResult(hit["reply"], key, True, hit["prompt_tokens"], hit["completion_tokens"])

    def chat(self, request: dict[str, Any], label: str = "") -> ChatResult:
        """The reply to ``request``: from the cache when allowed, else from the server (then cached)."""
        key = request_key(request)
        with self._lock:
            self.stats.requests += 1
        hit = self._lookup(key)
        if hit is not None:
            return hit
        if self.config.cache == "replay":
            raise RagdiagError(
                f"--cache replay: no cached reply for request {key[:16]} (prompt {request['prompt']}, "
                f"model {request['model']}, provider {request['provider']}{', ' + label if label else ''})"
            )
        with self._lock:
            future = self._inflight.get(key)
            owner = future is None
            if owner:
                future = self._inflight[key] = Future()
            else:
                self.stats.shared += 1
        if not owner:
            return future.result()
        try:
            result = self._lookup(key) or self._send(request, key)  # another worker may have just finished it
            future.set_result(result)
            return result
        except BaseException as err:
            future.set_exception(err)
            raise
        finally:
            with self._lock:
                del self._inflight[key]

    def _client(self):
        if self._sdk is None:
            key = os.environ.get("OPENAI_API_KEY")
            if not key:
                raise RagdiagError(
                    "OPENAI_API_KEY is not set and the cache cannot answer every request "
                    "(set the key, any value for a local server, or run with a filled cache)"
                )
            import openai

            self._sdk = openai.OpenAI(api_key=key, base_url=self.config.base_url, max_retries=0,
                                      timeout=self.config.timeout)
        return self._sdk

    def _send(self, request: dict[str, Any], key: str) -> ChatResult:
        from ragdiag.llm.retry import call_with_retries

        with self._lock:
            sdk = self._client()
        estimate = sum(len(m["content"]) for m in request["messages"]) // 4
        kwargs = {"model": request["model"], "messages": request["messages"], **request["params"]}

        def attempt():
            self.limiter.acquire(estimate)
            return sdk.chat.completions.create(**kwargs)

        def on_retry() -> None:
            with self._lock:
                self.stats.retries += 1

        try:
            response = call_with_retries(attempt, self.config, on_retry)
        except CallFailed:
            with self._lock:
                self.stats.failures += 1
            raise
        text = response.choices[0].message.content or "" if response.choices else ""
        usage = response.usage
        p_tok = int(getattr(usage, "prompt_tokens", 0) or 0)
        c_tok = int(getattr(usage, "completion_tokens", 0) or 0)
        if self.cache is not None:
            self.cache.put(key, request, text, p_tok, c_tok)
        cost = call_cost(self.prices, request["model"], p_tok, c_tok)
        with self._lock:
            self._sent.add(key)
            self.stats.calls += 1
            self.stats.prompt_tokens += p_tok
            self.stats.completion_tokens += c_tok
            self.stats.cost = None if cost is None or self.stats.cost is None else self.stats.cost + cost
        return ChatResult(text, key, False, p_tok, c_tok)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        if self._sdk is not None:
            self._sdk.close()
