"""Retry policy for chat calls (tenacity): exponential backoff with jitter, ``Retry-After`` honoured.

Retried: 429, 5xx, timeouts, connection errors, up to ``max_retries`` retries. Wait before retry n
(n = 1, 2, ...) is the server's ``Retry-After`` (or ``retry-after-ms``) when given, else
min(backoff_max, backoff_base · 2^(n−1)) plus up to backoff_base of random jitter. Authentication,
permission and unknown-model errors stop the whole run; other 4xx fail only their item.
"""

from __future__ import annotations

from typing import Any, Callable

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from ragdiag.errors import RagdiagError
from ragdiag.http_retry import retry_after_seconds
from ragdiag.llm.client import CallFailed, ClientConfig


def _retryable(err: BaseException) -> bool:
    import openai

    if isinstance(err, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(err, openai.APIStatusError) and err.status_code >= 500


def _describe(err: BaseException) -> str:
    status = getattr(err, "status_code", None)
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return f"HTTP {status}: {text}" if status else f"{type(err).__name__}: {text}"


def call_with_retries(attempt: Callable[[], Any], config: ClientConfig, on_retry: Callable[[], None]) -> Any:
    """Run ``attempt`` under the retry policy; raises :class:`CallFailed` or :class:`RagdiagError`."""
    import openai

    backoff = wait_exponential_jitter(multiplier=config.backoff_base, max=config.backoff_max, jitter=config.backoff_base)

    def wait(state: RetryCallState) -> float:
        asked = retry_after_seconds(state.outcome.exception()) if state.outcome else None
        return min(asked, config.backoff_max) if asked is not None else backoff(state)

    retrying = Retrying(
        stop=stop_after_attempt(config.max_retries + 1),
        wait=wait,
        retry=retry_if_exception(_retryable),
        before_sleep=lambda state: on_retry(),
        reraise=True,
    )
    try:
        return retrying(attempt)
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as err:
        raise RagdiagError(f"the server refused the request ({_describe(err)}); check the key, --base-url and --model") from None
    except openai.OpenAIError as err:
        tries = f"after {config.max_retries} retries" if _retryable(err) else "(not retryable)"
        raise CallFailed(f"{_describe(err)} {tries}") from None
