"""One retry policy for every remote call (chat completions, embeddings), on top of tenacity.

Retried: HTTP 429 and 5xx, timeouts, connection errors, and :class:`BadReply` (a 200 whose body is
not a usable reply: not JSON, HTML, no ``choices``, ``content: null``), up to ``max_retries``
retries. Wait before retry n (n = 1, 2, ...) is the server's ``retry-after-ms`` / ``Retry-After``
when given (capped at ``backoff_max``), else min(backoff_max, backoff_base · 2^(n−1)) plus a uniform
jitter in [0, jitter]. 401/403/404 stop the run (:class:`Refused`); other 4xx fail only their item.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragdiag.errors import RagdiagError
from ragdiag.extras import require

if TYPE_CHECKING:
    from tenacity import RetryCallState

REFUSING_STATUSES = frozenset({401, 403, 404})


class CallFailed(Exception):
    """One request failed for good (retry budget spent or a non-retryable error); never cached."""


class BadReply(Exception):
    """A 2xx reply whose body cannot be used (the reason says why); retried like a 5xx."""


class Refused(RagdiagError):
    """The server refused the credentials, the permission or the model: no later call can succeed."""


def http_status(err: BaseException) -> int | None:
    """The HTTP status carried by an exception (openai ``status_code``, voyageai ``http_status``,
    httpx ``response.status_code``)."""
    status = getattr(err, "status_code", None) or getattr(err, "http_status", None)
    if status is None:
        status = getattr(getattr(err, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def retry_after_seconds(err: BaseException) -> float | None:
    """Seconds asked for by the server's ``retry-after-ms`` or ``Retry-After`` header, if any."""
    headers = getattr(getattr(err, "response", None), "headers", None) or getattr(err, "headers", None) or {}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                seconds = float(value) * scale
            except ValueError:
                continue
            if math.isfinite(seconds):
                return max(0.0, seconds)
    return None


def _error_types(module: str, *names: str) -> tuple[type, ...]:
    """Exception classes of an already imported module (one that was never imported raised nothing)."""
    loaded = sys.modules.get(module)
    return tuple(getattr(loaded, name) for name in names) if loaded is not None else ()


def is_connection_error(err: BaseException) -> bool:
    """Timeouts and failed connections: httpx's own, the openai SDK's, the voyageai SDK's."""
    kinds = (_error_types("httpx", "TransportError") + _error_types("openai", "APIConnectionError")
             + _error_types("voyageai.error", "APIConnectionError", "Timeout"))
    return bool(kinds) and isinstance(err, kinds)


def describe(err: BaseException) -> str:
    """``HTTP 500: message`` or ``ExceptionType: message``, first line only."""
    if isinstance(err, BadReply):
        return f"bad reply: {err}"
    status = http_status(err)
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return f"HTTP {status}: {text}" if status else f"{type(err).__name__}: {text}"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry; ``jitter`` None means ``backoff_base``."""

    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    jitter: float | None = None
    retry_statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, *range(500, 600)}))

    def __post_init__(self) -> None:
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise RagdiagError(f"max retries must be a whole number >= 0, got {self.max_retries}")
        for name in ("backoff_base", "backoff_max"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise RagdiagError(f"{name.replace('_', ' ')} must be a finite number of seconds >= 0, got {value}")

    def retryable(self, err: BaseException) -> bool:
        if isinstance(err, BadReply) or is_connection_error(err):
            return True
        return http_status(err) in self.retry_statuses

    def wait(self, retry: int, err: BaseException | None, rng: Callable[[], float] = random.random) -> float:
        """Seconds to sleep before retry number ``retry`` (1-based) after ``err``."""
        asked = retry_after_seconds(err) if err is not None else None
        if asked is not None:
            return min(asked, self.backoff_max)
        jitter = self.backoff_base if self.jitter is None else self.jitter
        return min(self.backoff_max, self.backoff_base * 2 ** (retry - 1)) + jitter * rng()


def call_with_retries(fn: Callable[[], Any], policy: RetryPolicy, sleep: Callable[[float], None] = time.sleep,
                      on_retry: Callable[[BaseException, float], None] | None = None,
                      rng: Callable[[], float] = random.random) -> Any:
    """``fn()`` under ``policy``; raises :class:`CallFailed` (this item) or :class:`Refused` (the run).

    ``sleep`` is called with each wait (inject a recorder in tests); ``on_retry(err, wait)`` before it.
    Exceptions that are not remote-call failures (a :class:`RagdiagError`, a bug) pass through.
    """
    tenacity = require("tenacity")

    def wait(state: RetryCallState) -> float:
        return policy.wait(state.attempt_number, state.outcome.exception() if state.outcome else None, rng)

    def before_sleep(state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        if on_retry is not None and err is not None and state.next_action is not None:
            on_retry(err, state.next_action.sleep)

    retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(policy.max_retries + 1), wait=wait, sleep=sleep,
                                 retry=tenacity.retry_if_exception(policy.retryable), before_sleep=before_sleep,
                                 reraise=True)
    try:
        return retrying(fn)
    except RagdiagError:
        raise
    except Exception as err:
        if not (isinstance(err, BadReply) or is_connection_error(err) or http_status(err) is not None):
            raise
        if http_status(err) in REFUSING_STATUSES:
            raise Refused(f"the server refused the request ({describe(err)}); check the API key, the base URL "
                          f"and the model name") from None
        tries = f"after {policy.max_retries} retries" if policy.retryable(err) else "(not retryable)"
        raise CallFailed(f"{describe(err)} {tries}") from None
