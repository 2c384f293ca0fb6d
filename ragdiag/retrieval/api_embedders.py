"""Embedders behind HTTP APIs: ``openai:MODEL`` and ``voyage:MODEL``.

Both batch their inputs (``batch_size`` texts per request), retry on 429 and 5xx (and on
connection errors) with tenacity, honouring a ``Retry-After`` header when the server sends
one, else exponential back-off; the SDKs' own retries are switched off so there is one
retry policy. Keys come from ``OPENAI_API_KEY`` / ``VOYAGE_API_KEY``; base URLs from the
``base_url`` argument, else ``OPENAI_BASE_URL`` / ``VOYAGE_BASE_URL``, else the provider's.
A non-default base URL is part of the cache identity (another server may serve another
model under the same name).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.http_retry import http_status, retry_after_seconds
from ragdiag.retrieval.embedders import Embedder

_MAX_RETRY_AFTER_S = 60.0


def _status_and_retry_after(err: BaseException) -> tuple[int | None, float | None]:
    """HTTP status and Retry-After seconds (capped) carried by an OpenAI or Voyage SDK exception."""
    asked = retry_after_seconds(err)
    return http_status(err), None if asked is None else min(asked, _MAX_RETRY_AFTER_S)


def _is_connection_error(err: BaseException) -> bool:
    import openai
    from voyageai import error as voyage_error

    return isinstance(
        err, (openai.APIConnectionError, voyage_error.APIConnectionError, voyage_error.Timeout)
    )


def _is_retryable(err: BaseException) -> bool:
    status, _ = _status_and_retry_after(err)
    return status == 429 or (status is not None and status >= 500) or _is_connection_error(err)


class ApiEmbedder(Embedder):
    """Shared batching and retry policy for HTTP embedders; subclasses implement ``_request``."""

    provider: str
    key_env: str
    base_url_env: str

    def __init__(
        self,
        model: str,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        batch_size: int = 128,
        base_url: str | None = None,
        max_retries: int = 6,
        backoff_s: float = 1.0,
        timeout_s: float = 60.0,
    ) -> None:
        super().__init__(cache_dir, use_cache, batch_size)
        self.model = model
        self.base_url = base_url or os.environ.get(self.base_url_env) or None
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        suffix = f"@{self.base_url.rstrip('/')}" if self.base_url else ""
        self.identity = f"{self.provider}:{model}{suffix}"
        self._client = None

    def _api_key(self) -> str:
        key = os.environ.get(self.key_env)
        if not key:
            raise RagdiagError(f"{self.provider} embedder needs an API key: set {self.key_env}")
        return key

    def _request(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def _wait(self, retry_state) -> float:
        _, retry_after = _status_and_retry_after(retry_state.outcome.exception())
        if retry_after is not None:
            return retry_after
        return min(self.backoff_s * 2 ** (retry_state.attempt_number - 1), _MAX_RETRY_AFTER_S)

    def _count_retry(self, retry_state) -> None:
        self.stats.retries += 1

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        from tenacity import Retrying, retry_if_exception, stop_after_attempt

        retrying = Retrying(
            retry=retry_if_exception(_is_retryable),
            wait=self._wait,
            stop=stop_after_attempt(self.max_retries + 1),
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            vectors = retrying(self._request, texts)
        except RagdiagError:
            raise
        except Exception as err:  # the SDKs' errors: auth, bad request, exhausted retries
            status, _ = _status_and_retry_after(err)
            where = f" at {self.base_url}" if self.base_url else ""
            detail = f"HTTP {status}" if status else type(err).__name__
            tries = f" after {self.max_retries} retries" if _is_retryable(err) else ""
            raise RagdiagError(f"{self.identity}: embedding request failed{where}{tries}: {detail}: {err}") from None
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(texts):
            raise RagdiagError(f"{self.identity}: server returned {len(array)} vectors for {len(texts)} texts")
        if not np.isfinite(array).all():
            raise RagdiagError(f"{self.identity}: server returned non-finite vector values")
        return array


class OpenAIEmbedder(ApiEmbedder):
    """``openai:MODEL`` via the openai SDK's ``embeddings.create`` (any compatible server)."""

    provider, key_env, base_url_env = "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"

    def _request(self, texts: list[str]) -> list[list[float]]:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self._api_key(), base_url=self.base_url, max_retries=0, timeout=self.timeout_s
            )
        response = self._client.embeddings.create(model=self.model, input=texts)
        return [item.embedding for item in sorted(response.data, key=lambda item: item.index)]


class VoyageEmbedder(ApiEmbedder):
    """``voyage:MODEL`` via ``voyageai.Client.embed`` (``base_url`` points it at another server)."""

    provider, key_env, base_url_env = "voyage", "VOYAGE_API_KEY", "VOYAGE_BASE_URL"

    def _request(self, texts: list[str]) -> list[list[float]]:
        if self._client is None:
            import voyageai

            self._client = voyageai.Client(
                api_key=self._api_key(), base_url=self.base_url, max_retries=0, timeout=self.timeout_s
            )
        return self._client.embed(texts, model=self.model).embeddings
