"""What sends a chat request: the one narrow interface below the LLM cache, ``send(request, key) → Reply``.

:class:`ragdiag.llm.client.LLMClient` is the cached layer (cache, in-flight sharing, leases, stats,
prices, the reply cap); a backend only answers one request — like httpx's ``BaseTransport.handle_request``
under its client. The backends:

- :class:`OpenAIBackend` — the openai SDK against any chat-completions server, with the retry policy,
  the ``--rpm``/``--tpm`` limits and the in-flight limit (:mod:`ragdiag.remote`);
- :class:`BatchBackend` — ``--batch``: a request is written to a batch file and its item waits
  (:class:`ragdiag.llm.batch.Deferred`); :meth:`BatchBackend.flush_into` sends the files and caches the replies;
- :class:`RayBackend` — ``--engine ray``: a request is held for Ray workers (each an ``LLMClient`` over
  an ``OpenAIBackend``, or vLLM rows with ``--llm-backend vllm``), flushed likewise (:mod:`ragdiag.llm.ray_calls`);
- anything else with ``send``: tests plug a backend through :func:`use_backend` (every client the
  commands open in that block uses it), e.g. one answering from the chat test server's logic in process.

A backend that ``defers`` answers through the cache after its flush; the others return the reply.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from ragdiag.errors import RagdiagError
from ragdiag.io.provenance import origin_of
from ragdiag.llm.concurrency import InFlightLimit, read_slots
from ragdiag.llm.context_errors import context_exceeded
from ragdiag.llm.logprobs import pack_reply
from ragdiag.llm.output_limit import hit_limit, mark_truncated
from ragdiag.llm.ratelimit import RateLimiter
from ragdiag.remote.endpoint import check_endpoint
from ragdiag.remote.retry import BadReply, call_with_retries
from ragdiag.remote.transport import openai_client, reply_json

OPENAI_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True)
class Reply:
    """A backend's answer: the text (a logprob request's packed reply; marked when the output limit cut it),
    the usage the server reported, its provenance mark, and whether the output limit was hit."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    origin: str = ""
    truncated: bool = False


class Backend(Protocol):
    """Answers one chat request (the sorted-JSON request the cache key is the hash of)."""

    defers: bool  # True: ``send`` holds the request and raises Deferred; the reply reaches the cache on flush

    def send(self, request: dict[str, Any], key: str) -> Reply: ...

    def close(self) -> None: ...


def reply_text(body: dict[str, Any]) -> str:
    """The text of a chat completion's JSON; :class:`BadReply` when the 200 carries no usable text."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BadReply("the reply has no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise BadReply("the reply's message content is null" if content is None else "the reply's content is not text")
    if not content.strip():
        raise BadReply("the reply's message content is empty")
    return content


def tokens(body: dict[str, Any], name: str) -> int:
    """A usage count of a chat completion's JSON (0 when absent or not a whole number ≥ 0)."""
    usage = body.get("usage")
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def completion_reply(body: dict[str, Any], request: dict[str, Any], source: str) -> Reply:
    """The :class:`Reply` of a chat completion's JSON for ``request`` (``source`` names the server in errors)."""
    truncated = hit_limit(body)
    if request["params"].get("logprobs"):
        return Reply(pack_reply(body, f"{source} (model {request['model']})"), tokens(body, "prompt_tokens"),
                     tokens(body, "completion_tokens"), origin_of(body), False)
    text = reply_text(body)
    return Reply(mark_truncated(text, request["params"]) if truncated else text, tokens(body, "prompt_tokens"),
                 tokens(body, "completion_tokens"), origin_of(body), truncated)


class OpenAIBackend:
    """The openai SDK: each request through the retry policy, the rate limits and the in-flight limit."""

    defers = False

    def __init__(self, config: Any, in_flight: InFlightLimit, limiter: RateLimiter, sleep: Callable[[float], None],
                 on_retry: Callable[[], None]) -> None:
        self.config, self.in_flight, self.limiter, self.sleep, self.on_retry = config, in_flight, limiter, sleep, on_retry
        self._lock = threading.Lock()
        self._sdk: Any = None
        self._unusable: RagdiagError | None = None

    def sdk(self) -> Any:
        """The SDK client, built once; the first time, the key is checked and the endpoint is tried."""
        with self._lock:
            if self._unusable is not None:  # other workers stop on the same error without asking again
                raise self._unusable
            if self._sdk is None:
                key = os.environ.get(KEY_ENV)
                try:
                    if not key:
                        raise RagdiagError(
                            f"{KEY_ENV} is not set and the cache cannot answer every request "
                            "(set the key, any value for a local server, or run with a filled cache)"
                        )
                    sdk = openai_client(key, self.config.base_url, self.config.timeout)  # a missing openai is named first
                    check_endpoint(self.config.base_url or OPENAI_URL, key, KEY_ENV, self.config.timeout)
                    if self.config.base_url is not None:  # a local server may publish its slot count
                        self.in_flight.use_server_slots(read_slots(self.config.base_url, key, self.config.timeout))
                except RagdiagError as err:
                    self._unusable = err
                    raise
                self._sdk = sdk
            return self._sdk

    def send(self, request: dict[str, Any], key: str) -> Reply:
        sdk = self.sdk()
        estimate = sum(len(m["content"]) for m in request["messages"]) // 4
        kwargs = {"model": request["model"], "messages": request["messages"], **request["params"]}
        source = f"the server {self.config.shown_base_url or OPENAI_URL}"

        def attempt() -> Reply:
            self.limiter.acquire(estimate)
            try:
                with self.in_flight.place():
                    raw = sdk.chat.completions.with_raw_response.create(**kwargs)
            except Exception as err:
                exceeded = context_exceeded(err)  # a 400 saying the context is exceeded: one line, not retried
                if exceeded is not None:
                    raise exceeded from None
                raise
            return completion_reply(reply_json(raw.http_response), request, source)

        def on_retry(err: BaseException, wait: float) -> None:
            self.in_flight.after_error(err)  # a timeout: fewer requests in flight before this one is retried
            self.on_retry()

        reply: Reply = call_with_retries(attempt, self.config.policy, sleep=self.sleep, on_retry=on_retry)
        return reply

    def close(self) -> None:
        if self._sdk is not None:
            self._sdk.close()


class BatchBackend:
    """``--batch``: requests go into batch files (:mod:`ragdiag.llm.batch`), sent and collected on flush."""

    defers = True

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def send(self, request: dict[str, Any], key: str) -> Reply:
        self.runner.defer(key, request)  # raises Deferred: the item waits for the flush
        raise AssertionError("a batch defers every request")

    def flush_into(self, client: Any, progress: bool = True) -> None:
        """Send the held requests as batches, wait, cache the replies; the client counts them."""
        client.count_batch(self.runner.flush(client.cache, client.prices))

    def close(self) -> None:
        return None


class RayBackend:
    """``--engine ray``: requests are held for Ray workers (:class:`ragdiag.llm.ray_calls.RayCalls`)."""

    defers = True

    def __init__(self, calls: Any) -> None:
        self.calls = calls

    def send(self, request: dict[str, Any], key: str) -> Reply:
        failure = self.calls.take_failure(key)
        if failure is not None:  # its Ray worker's call failed for good: the item fails, as locally
            raise failure
        self.calls.defer(key, request)  # raises Deferred
        raise AssertionError("Ray defers every request")

    def flush_into(self, client: Any, progress: bool = True) -> None:
        self.calls.flush_into(client, progress)

    def close(self) -> None:
        return None


BackendFactory = Callable[[Any], Backend]  # the client's settings → the backend its requests go to
_plugged: list[BackendFactory] = []


@contextmanager
def use_backend(factory: BackendFactory) -> Iterator[None]:
    """Every client opened inside the block sends through ``factory(config)`` (a test double, another SDK)."""
    _plugged.append(factory)
    try:
        yield
    finally:
        _plugged.remove(factory)


def plugged(config: Any) -> Backend | None:
    """The backend :func:`use_backend` plugged in for ``config``, if any."""
    return _plugged[-1](config) if _plugged else None
