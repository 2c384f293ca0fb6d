"""OpenAI-compatible chat client: the call cache, with stats and prices, over a backend that sends.

:class:`LLMClient` is the cached layer; what sends a request it cannot answer from the cache is its
backend (:mod:`ragdiag.llm.backends`: ``send(request, key) → Reply``): the openai SDK, batch files
(``--batch``), Ray workers (``--engine ray``) or a test double.

Works with any server speaking the chat-completions API (OpenAI, vLLM, Ollama, llama.cpp):
``base_url`` from the flag or ``$OPENAI_BASE_URL``, key from ``$OPENAI_API_KEY`` (needed only when
the cache cannot answer). Temperature 0 and a fixed seed by default. Requests go out through
:mod:`ragdiag.remote`: one retry policy (429, 5xx, timeouts, connection errors and unusable 200
replies, ``Retry-After`` honoured), one transport seam, one endpoint check before the first request
that must be sent (so ``--cache replay`` and fully cached runs never touch the network). The cache
key holds the server's full base URL (scheme, host, port, path; no credentials). Identical requests
in flight at the same time are sent once: between threads by a shared future, between processes
sharing one cache by a lease row in the cache (the second process waits for the first's reply).
A 400 whose body says the context was exceeded fails its item as
:class:`ragdiag.llm.context_errors.ContextExceeded`: one line with the server's counts, never retried,
never cached.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.config import resolve_cache_dir
from ragdiag.engine.settings import active as active_engine
from ragdiag.errors import RagdiagError
from ragdiag.io.provenance import note_reply
from ragdiag.llm.backends import (
    KEY_ENV,
    OPENAI_URL,
    Backend,
    BatchBackend,
    OpenAIBackend,
    RayBackend,
    plugged,
    reply_text,
)
from ragdiag.llm.batch_config import (
    MAX_BYTES,
    MAX_REQUESTS,
    batch_runner,
    check_batch_settings,
)
from ragdiag.llm.concurrency import InFlightLimit
from ragdiag.llm.logprobs import logprob_params, pack_reply
from ragdiag.llm.output_limit import limit_param
from ragdiag.llm.prices import call_costs, load_prices
from ragdiag.llm.ratelimit import RateLimiter
from ragdiag.remote.call_cache import CACHE_FILE, CallCache, request_key
from ragdiag.remote.retry import CallFailed, RetryPolicy
from ragdiag.remote.store import CACHE_MODES
from ragdiag.remote.transport import check_timeout
from ragdiag.remote.urls import cache_url, check_base_url, redact_url
from ragdiag.results.llm_run import CallStats

__all__ = ["CACHE_MODES", "DEFAULT_MODEL", "KEY_ENV", "OPENAI_URL", "CallFailed", "CallStats", "ChatResult", "ClientConfig",
           "LLMClient"]

DEFAULT_MODEL = "gpt-4o-mini"
LEASE_POLL_S = 0.05  # how often a process waiting for another's reply looks at the cache


MAX_REPLY_CHARS = 100_000  # a judge grade or an answer is far shorter; a 10 MB reply is kept as its head


def cap_reply(text: str) -> tuple[str, bool]:
    """(the reply as stored and used, whether it was cut): a reply over :data:`MAX_REPLY_CHARS` keeps
    its head plus a line with its full length and the sha256 of the whole reply, so the cache, the
    manifest and ``judge_reply`` never hold megabytes, and live and replayed runs see the same text."""
    if len(text) <= MAX_REPLY_CHARS:
        return text, False
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    note = (f"\n[ragdiag: reply cut at {MAX_REPLY_CHARS:,} of {len(text):,} characters; "
            f"sha256 of the whole reply: {digest}]")
    return text[:MAX_REPLY_CHARS] + note, True


def stored_reply(body: dict[str, Any], request: dict[str, Any]) -> str:
    """The text a batch reply is cached as, as the synchronous path caches it: for a logprob request
    its content and top_logprobs (:func:`ragdiag.llm.logprobs.pack_reply`; a reply without them is
    one line, :class:`ragdiag.llm.logprobs.LogprobsMissing`), else its content; cut at
    :data:`MAX_REPLY_CHARS` (:func:`cap_reply`)."""
    params = request.get("params")
    if isinstance(params, dict) and params.get("logprobs"):
        return pack_reply(body, f"the batch reply (model {request.get('model')})")
    return cap_reply(reply_text(body))[0]


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
    batch: str | None = None
    batch_dir: Path | None = None
    batch_max_requests: int = MAX_REQUESTS
    batch_max_bytes: int = MAX_BYTES
    batch_poll: float = 5.0
    batch_wait: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise RagdiagError(f"--model must name a chat model (e.g. {DEFAULT_MODEL}), got an empty name")
        if self.cache not in CACHE_MODES:
            raise RagdiagError(f"--cache must be one of {', '.join(CACHE_MODES)}, got '{self.cache}'")
        if self.workers < 1:
            raise RagdiagError(f"--workers must be at least 1, got {self.workers}")
        if not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            raise RagdiagError(f"temperature must be between 0 and 2, got {self.temperature}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise RagdiagError(f"{name} limit must be at least 1, got {value}")
        check_timeout(self.timeout)
        check_batch_settings(self)
        self.policy  # noqa: B018 (checks the retry settings)
        self.base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if self.base_url is not None:
            self.base_url = check_base_url(self.base_url)

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.backoff_base, self.backoff_max)

    @property
    def provider(self) -> str:
        """Cache-key provider: the server's normalised base URL (scheme, host, port, path; no credentials)."""
        return cache_url(self.base_url or OPENAI_URL)

    @property
    def shown_base_url(self) -> str | None:
        """The base URL as it may be written or logged (credentials removed)."""
        return redact_url(self.base_url)


@dataclass(frozen=True)
class ChatResult:
    """A reply and where it came from."""

    text: str
    key: str
    cached: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    origin: str = ""  # the server's provenance mark (:mod:`ragdiag.io.provenance`), "" when unmarked


@dataclass
class LLMClient:
    """Cached chat completions over a backend; one instance is shared by all worker threads of a run.
    ``backend``: what sends (default: a :func:`ragdiag.llm.backends.use_backend` plug, else :meth:`default_backend`)."""

    config: ClientConfig
    stats: CallStats = field(default_factory=CallStats)
    sleep: Callable[[float], None] = time.sleep
    backend: Backend | None = None

    def __post_init__(self) -> None:
        cfg = self.config
        self.cache = None if cfg.cache == "off" else CallCache(resolve_cache_dir(cfg.cache_dir) / CACHE_FILE)
        self.prices = load_prices(cfg.prices)
        self.limiter = RateLimiter(cfg.rpm, cfg.tpm)
        self.in_flight = InFlightLimit(cfg.workers)  # halved on timeouts, capped by the server's slots
        self._lock = threading.Lock()
        self._inflight: dict[str, Future] = {}
        self._sent: set[str] = set()
        self._batched: set[str] = set()
        self._owner = uuid.uuid4().hex  # this client's name on the leases it takes
        self.provider = cfg.provider
        if self.backend is None:
            self.backend = plugged(cfg) or self.default_backend()
        self.batch = self.backend.runner if isinstance(self.backend, BatchBackend) else None
        self.ray = self.backend.calls if isinstance(self.backend, RayBackend) else None

    def default_backend(self) -> Backend:
        """The backend the settings ask for: batch files (``--batch``), Ray workers (``--engine ray``; the
        cache-key provider becomes vLLM's with ``--llm-backend vllm``), else the openai SDK."""
        cfg = self.config
        if active_engine().is_ray:
            from ragdiag.llm.ray_calls import attach

            calls, self.provider = attach(cfg, active_engine())  # refuses --batch and --cache off
            return RayBackend(calls)
        sdk = OpenAIBackend(cfg, self.in_flight, self.limiter, self.sleep, self._count_retry)
        if cfg.batch is not None:
            return BatchBackend(batch_runner(cfg, sdk.sdk, self.sleep, stored_reply))
        return sdk

    def _sender(self) -> Backend:
        """The backend (set by ``__post_init__``)."""
        if self.backend is None:
            raise RuntimeError("LLMClient: no backend")
        return self.backend

    def _count_retry(self) -> None:
        with self._lock:
            self.stats.retries += 1

    def request(self, messages: list[dict[str, str]], prompt: str, model: str | None = None,
                json_reply: bool = False, repeat: int | None = None, top_logprobs: int | None = None,
                max_tokens: int | None = None) -> dict[str, Any]:
        """The full request whose sorted JSON is hashed for the cache key (``top_logprobs``: a one-token
        call with logprobs, :mod:`ragdiag.llm.logprobs`; ``max_tokens``: the output limit, sent as the
        parameter the endpoint wants, :mod:`ragdiag.llm.output_limit`; all part of the key)."""
        params: dict[str, Any] = {"temperature": self.config.temperature, "seed": self.config.seed}
        if json_reply:
            params["response_format"] = {"type": "json_object"}
        if top_logprobs is not None:
            params.update(logprob_params(top_logprobs))
        elif max_tokens is not None:
            params[limit_param(self.config.provider)] = max_tokens
        req: dict[str, Any] = {"provider": self.provider, "model": model or self.config.model, "messages": messages,
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
        batched = key in self._batched  # answered by this run's batch: a call of this run, not a cache hit
        note_reply(hit.get("origin"))  # the cache keeps where the reply came from
        with self._lock:
            self.stats.cache_hits += 0 if batched else 1
        return ChatResult(hit["reply"], key, batched is False, hit["prompt_tokens"], hit["completion_tokens"])

    def chat(self, request: dict[str, Any], label: str = "", fresh: bool = False) -> ChatResult:
        """The reply to ``request``: from the cache when allowed, else from the server (then cached).
        ``fresh`` skips the cache lookup: the request is sent and its reply replaces the cached one
        (a cached reply that did not parse, asked again)."""
        key = request_key(request)
        with self._lock:
            self.stats.requests += 1
        hit = None if fresh else self._lookup(key)
        if hit is not None:
            return hit
        if self.config.cache == "replay":
            raise RagdiagError(
                f"--cache replay: no cached reply for request {key[:16]} (prompt {request['prompt']}, "
                f"model {request['model']}, provider {redact_url(request['provider'])}{', ' + label if label else ''})"
            )
        if self._sender().defers:  # batch files, Ray workers: the item waits for the flush
            from ragdiag.llm.batch import Deferred

            try:
                self._sender().send(request, key)
            except Deferred:
                with self._lock:
                    self.stats.requests -= 1  # counted when the item runs again, after the flush
                raise
        with self._lock:
            future = self._inflight.get(key)
            owner = future is None
            if future is None:
                future = self._inflight[key] = Future()
            else:
                self.stats.shared += 1
        if not owner:
            return future.result()
        try:
            result = (None if fresh else self._lookup(key)) or self._send_once(request, key, fresh)  # another worker may have just finished it
            future.set_result(result)
            return result
        except BaseException as err:
            future.set_exception(err)
            raise
        finally:
            with self._lock:
                del self._inflight[key]

    def _lease_seconds(self) -> float:
        """How long a lease may stand before others stop waiting: every attempt timing out plus the
        longest back-off between them (a crashed owner on this host is noticed at once)."""
        cfg = self.config
        return cfg.timeout * (cfg.max_retries + 1) + cfg.backoff_max * cfg.max_retries + 30.0

    def _send_once(self, request: dict[str, Any], key: str, fresh: bool) -> ChatResult:
        """Send ``request`` unless another process is already asking it: the lease row in the cache
        decides; a process that does not get it polls the cache for the other's reply, and asks
        itself when the lease goes away without a reply (the other failed or was killed)."""
        if self.cache is None:
            return self._send(request, key)
        since = time.time()
        while True:
            if self.cache.take_lease(key, self._owner, self._lease_seconds()):
                try:
                    return (None if fresh else self._lookup(key)) or self._send(request, key)
                finally:
                    self.cache.drop_lease(key, self._owner)
            while self.cache.lease_held(key, self._lease_seconds()):
                time.sleep(LEASE_POLL_S)
            hit = self.cache.get(key)
            if hit is not None and (hit["created"] >= since or not fresh and self.config.cache == "rw"):
                note_reply(hit.get("origin"))
                with self._lock:
                    self.stats.from_other_process += 1
                    self._sent.add(key)
                return ChatResult(hit["reply"], key, True, hit["prompt_tokens"], hit["completion_tokens"])

    def flush_batch(self, progress: bool = True) -> None:
        """Send the deferred requests (``--batch``, ``--engine ray``), wait, and put the replies into the cache."""
        flush = getattr(self._sender(), "flush_into", None)
        if flush is None:  # only a deferring backend holds requests (Deferred)
            raise RuntimeError("flush_batch: this client deferred nothing (neither --batch nor --engine ray)")
        flush(self, progress)

    def count_batch(self, got: Any) -> None:
        """Count a flushed batch's replies (:meth:`ragdiag.llm.batch.BatchRunner.flush`'s tally)."""
        cost = got.cost_batch
        with self._lock:
            self._batched.update(got.keys)
            self.stats.calls += got.answered
            self.stats.batch_calls += got.answered
            self.stats.prompt_tokens += got.prompt_tokens
            self.stats.completion_tokens += got.completion_tokens
            self.stats.cost = None if cost is None or self.stats.cost is None else self.stats.cost + cost
            self.stats.add_costs(got.cost_sync, got.cost_batch)

    def _send(self, request: dict[str, Any], key: str) -> ChatResult:
        """``request`` through the backend; the reply capped, counted, priced and cached."""
        try:
            reply = self._sender().send(request, key)
        except CallFailed:
            with self._lock:
                self.stats.failures += 1
            raise
        p_tok, c_tok = reply.prompt_tokens, reply.completion_tokens
        text, capped = cap_reply(reply.text)
        with self._lock:
            self.stats.capped_replies += capped
            self.stats.truncated += reply.truncated
        note_reply(reply.origin)  # ragdiag's test servers mark their replies
        if self.cache is not None:
            self.cache.put(key, request, text, p_tok, c_tok, reply.origin)
        cost, batch_cost = call_costs(self.prices, request["model"], p_tok, c_tok)
        with self._lock:
            self.stats.add_costs(cost, batch_cost)
            self._sent.add(key)
            self.stats.calls += 1
            self.stats.prompt_tokens += p_tok
            self.stats.completion_tokens += c_tok
            self.stats.cost = None if cost is None or self.stats.cost is None else self.stats.cost + cost
        return ChatResult(text, key, False, p_tok, c_tok, reply.origin)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        self._sender().close()
