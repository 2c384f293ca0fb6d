"""The one seam through which ragdiag's HTTP requests go out, and the one place SDK clients are built.

Every client gets its ``httpx.Client`` from :func:`http_client`, which uses the transport installed
with :func:`use_transport` when there is one: the openai SDK (chat and embeddings) directly, the
voyageai SDK through a ``requests`` session whose adapter forwards to that client
(:mod:`.requests_adapter`). A test swaps in ``httpx.MockTransport(handler)`` and sees every request
of both SDKs, with no server and no patching::

    with use_transport(httpx.MockTransport(handler)):
        run_the_command()

Both SDKs are built with their own retries off: :mod:`ragdiag.remote.retry` is the one policy.
httpx and the SDKs are imported when a client is built, never when this module is imported.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.remote.retry import BadReply

if TYPE_CHECKING:
    import ssl

    import httpx

_installed: list[httpx.BaseTransport] = []


@contextmanager
def use_transport(transport: httpx.BaseTransport) -> Iterator[httpx.BaseTransport]:
    """Send every request made inside the block (any thread) through ``transport``."""
    _installed.append(transport)
    try:
        yield transport
    finally:
        _installed.remove(transport)


def check_timeout(seconds: float) -> float:
    """A finite, positive number of seconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        raise RagdiagError(f"timeout must be a positive number of seconds, got {seconds}")
    return float(seconds)


def current_transport() -> httpx.BaseTransport | None:
    """The transport installed with :func:`use_transport` (innermost), or None for the real network."""
    return _installed[-1] if _installed else None


@cache
def _verifying_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """httpx's default certificate check (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle),
    built once per process for each pair of those variables' values: loading the bundle costs about 50 ms of
    CPU, which httpx would otherwise pay for every client (and ragdiag builds one per command step)."""
    httpx = require("httpx")
    return httpx.create_ssl_context(verify=True)


def http_client(timeout: float) -> httpx.Client:
    """An ``httpx.Client`` with ``timeout`` seconds, through the installed transport if any, verifying
    certificates as httpx does by default (its context shared by every client, see :func:`_verifying_context`)."""
    httpx = require("httpx")
    verify = _verifying_context(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)
    return httpx.Client(transport=current_transport(), timeout=check_timeout(timeout), follow_redirects=True,
                        verify=verify)


def openai_client(api_key: str, base_url: str | None, timeout: float):
    """The openai SDK client on :func:`http_client` (its own retries off); the base URL's query
    parameters (``?api-version=…``) go with every request as the SDK's default query."""
    from ragdiag.remote.urls import split_query

    openai = require("openai")
    base, query = split_query(base_url) if base_url else (None, {})
    return openai.OpenAI(api_key=api_key, base_url=base, max_retries=0, timeout=check_timeout(timeout),
                         http_client=http_client(timeout), default_query=query or None)


def voyage_client(api_key: str, base_url: str, timeout: float):
    """The voyageai SDK client, sending through :func:`http_client` (its own retries off).

    The SDK takes its ``requests`` session from the process-wide ``voyageai.requestssession``; the
    factory installed here hands it a session mounted on :class:`~.requests_adapter.HttpxAdapter`.
    """
    voyageai: Any = require("voyageai")  # the SDK's module-level session factory is replaced below
    from ragdiag.remote.requests_adapter import seam_session

    voyageai.requestssession = partial(seam_session, current_transport, http_client)
    return voyageai.Client(api_key=api_key, base_url=base_url, max_retries=0, timeout=check_timeout(timeout))


def _not_json(start: str) -> str:
    """What a reply that is not JSON is, from its first characters: an HTML page or just not JSON."""
    return "an HTML page" if start.lstrip().lower().startswith(("<!doctype", "<html")) else "not JSON"


def voyage_embeddings(client: Any, texts: list[str], model: str, input_type: str | None) -> list[Any]:
    """``client.embed(...).embeddings``, one vector per text in the texts' order.

    Errors keep the SDK's types, which :mod:`.retry` reads (``http_status``, the reply's headers for
    ``Retry-After``, ``APIConnectionError`` / ``Timeout``), except a 2xx the SDK could not use (no JSON,
    HTML, no ``data``): that is a :class:`BadReply`, retried like a 5xx and never cached.
    """
    errors = require("voyageai.error")
    try:
        return client.embed(texts, model=model, input_type=input_type).embeddings
    except errors.VoyageError as err:
        if not 200 <= (err.http_status or 0) < 300:
            raise
        body = err.http_body or ""
        raise BadReply(f"the reply is {_not_json(body[:200])} ({len(body)} characters)") from None
    except (AttributeError, KeyError, TypeError) as err:  # the SDK reading a 200 without data / usage
        raise BadReply(f"the reply has no usable embeddings ({type(err).__name__}: {err})") from None


def reply_json(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a 2xx reply; :class:`BadReply` naming what came instead (HTML, text, nothing)."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    try:
        body = response.json()
    except ValueError:
        what = _not_json(response.content[:200].decode("utf-8", "replace"))
        raise BadReply(f"the reply is {what} ({kind}, {len(response.content)} bytes)") from None
    if not isinstance(body, dict):
        raise BadReply(f"the reply is a JSON {type(body).__name__}, not an object")
    return body

