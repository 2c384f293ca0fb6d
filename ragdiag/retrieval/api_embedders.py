"""Embedders behind HTTP APIs: ``openai:MODEL`` and ``voyage:MODEL``, through :mod:`ragdiag.remote`.

Both batch their inputs (``batch_size`` texts per request) and send them through the one transport
seam under the one retry policy (429, 5xx, timeouts, connection errors and unusable 200 replies —
not JSON, HTML, no ``data``, null or missing vectors, non-finite values — ``Retry-After`` honoured).
``openai:`` uses the openai SDK, ``voyage:`` the voyageai SDK (its ``requests`` session forwarded to the
same seam by :mod:`ragdiag.remote.requests_adapter`); both SDKs have their own retries off. Keys
come from ``OPENAI_API_KEY`` / ``VOYAGE_API_KEY``; base URLs from ``base_url``, else
``OPENAI_BASE_URL`` / ``VOYAGE_BASE_URL``, else the provider's. The endpoint is checked once, before
the first request that must be sent. The cache identity holds provider, normalised base URL (no
credentials), model and parameters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.remote.endpoint import check_endpoint
from ragdiag.remote.retry import BadReply, CallFailed, RetryPolicy, call_with_retries
from ragdiag.remote.transport import (
    openai_client,
    reply_json,
    voyage_client,
    voyage_embeddings,
)
from ragdiag.remote.urls import cache_url, check_base_url, redact_url
from ragdiag.retrieval.embedder_base import Embedder

_MAX_WAIT_S = 60.0


def _vectors(data: Any, count: int) -> np.ndarray:
    """(count × dim) float32 from a reply's ``data`` list sorted by ``index``; BadReply otherwise."""
    if not isinstance(data, list):
        raise BadReply("the reply has no data list")
    try:
        rows = [item["embedding"] for item in sorted(data, key=lambda item: item["index"])]
    except (KeyError, TypeError) as err:
        raise BadReply(f"the reply's vectors are missing or not numbers ({type(err).__name__})") from None
    return _matrix(rows, count)


def _matrix(rows: list[Any], count: int) -> np.ndarray:
    """(count × dim) float32 from one vector per text, in the texts' order; BadReply otherwise."""
    try:
        array = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise BadReply(f"the reply's vectors are missing or not numbers ({type(err).__name__})") from None
    if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0:
        raise BadReply(f"the reply holds {len(rows)} vectors for {count} texts")
    if not np.isfinite(array).all():
        raise BadReply("the reply holds non-finite vector values")
    return array


class ApiEmbedder(Embedder):
    """Shared batching, retries and cache identity for HTTP embedders; subclasses implement ``_request``."""

    provider: str
    key_env: str
    base_url_env: str
    default_url: str

    def __init__(
        self,
        model: str,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        batch_size: int = 128,
        base_url: str | None = None,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 60.0,
        cache_mode: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(cache_dir, use_cache, batch_size, cache_mode)
        self.model = model
        base_url = base_url or os.environ.get(self.base_url_env) or None
        self.base_url = check_base_url(base_url, self.key_env) if base_url else None
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.sleep = sleep
        shown = redact_url(self.base_url)
        self.identity = f"{self.provider}:{model}" + (f"@{shown.rstrip('/')}" if shown else "")
        self._client: Any = None

    @property
    def url(self) -> str:
        return self.base_url or self.default_url

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.backoff_s, _MAX_WAIT_S)

    def cache_identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "base_url": cache_url(self.url), "model": self.model,
                "params": self.cache_params()}

    def _api_key(self) -> str:
        key = os.environ.get(self.key_env)
        if not key:
            raise RagdiagError(f"{self.provider} embedder needs an API key: set {self.key_env}")
        return key

    def _connect(self, key: str) -> Any:
        raise NotImplementedError

    def _request(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _ensure_client(self) -> None:
        """Check the key, build the client, check the endpoint: once, at the first request that must be sent.

        The client comes before the endpoint check so that a missing SDK is named first (its extra
        brings the HTTP libraries too).
        """
        if self._client is None:
            key = self._api_key()
            client = self._connect(key)
            check_endpoint(self.url, key, self.key_env, self.timeout_s)
            self._client = client

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self._ensure_client()

        def on_retry(err: BaseException, wait: float) -> None:
            self.stats.retries += 1

        try:
            return call_with_retries(lambda: self._request(texts), self.policy, sleep=self.sleep, on_retry=on_retry)
        except CallFailed as err:
            where = "" if self.base_url else f" to {self.url}"
            raise RagdiagError(f"{self.identity}: embedding request{where} failed: {err}") from None


class OpenAIEmbedder(ApiEmbedder):
    """``openai:MODEL`` via the openai SDK's ``embeddings.create`` (any compatible server)."""

    provider, key_env, base_url_env = "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"
    requires, _loaded = ("openai",), ("_client",)
    default_url = "https://api.openai.com/v1"

    def _connect(self, key: str) -> Any:
        return openai_client(key, self.base_url, self.timeout_s)

    def _request(self, texts: list[str]) -> np.ndarray:
        raw = self._client.embeddings.with_raw_response.create(model=self.model, input=texts, encoding_format="float")
        return _vectors(reply_json(raw.http_response).get("data"), len(texts))


class VoyageEmbedder(ApiEmbedder):
    """``voyage:MODEL`` via the voyageai SDK's ``Client.embed`` (``base_url`` points it at another server).

    Queries and passages go through the same call (``input_type`` None), as with every other embedder.
    """

    requires, _loaded = ("voyageai",), ("_client",)

    provider, key_env, base_url_env = "voyage", "VOYAGE_API_KEY", "VOYAGE_BASE_URL"
    default_url = "https://api.voyageai.com/v1"

    def _connect(self, key: str) -> Any:
        return voyage_client(key, self.url, self.timeout_s)

    def _request(self, texts: list[str]) -> np.ndarray:
        return _matrix(voyage_embeddings(self._client, texts, self.model, input_type=None), len(texts))
