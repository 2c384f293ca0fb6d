"""The one seam through which ragdiag's HTTP requests go out, and the one place SDK clients are built.

Every client (the openai SDK for chat and embeddings, plain httpx for Voyage's REST API) gets its
``httpx.Client`` from :func:`http_client`, which uses the transport installed with
:func:`use_transport` when there is one. A test swaps in ``httpx.MockTransport(handler)`` and sees
every request, with no server and no patching::

    with use_transport(httpx.MockTransport(handler)):
        run_the_command()
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator

import httpx

from ragdiag.errors import RagdiagError
from ragdiag.remote.retry import BadReply

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


def http_client(timeout: float) -> httpx.Client:
    """An ``httpx.Client`` with ``timeout`` seconds, through the installed transport if any."""
    transport = _installed[-1] if _installed else None
    return httpx.Client(transport=transport, timeout=check_timeout(timeout), follow_redirects=True)


def openai_client(api_key: str, base_url: str | None, timeout: float):
    """The openai SDK client (its own retries off: :mod:`ragdiag.remote.retry` is the one policy)."""
    from ragdiag.extras import require

    openai = require("openai")
    return openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=check_timeout(timeout),
                         http_client=http_client(timeout))


def reply_json(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a 2xx reply; :class:`BadReply` naming what came instead (HTML, text, nothing)."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    try:
        body = response.json()
    except ValueError:
        start = response.content[:200].lstrip().lower()
        what = "an HTML page" if start.startswith((b"<!doctype", b"<html")) else "not JSON"
        raise BadReply(f"the reply is {what} ({kind}, {len(response.content)} bytes)") from None
    if not isinstance(body, dict):
        raise BadReply(f"the reply is a JSON {type(body).__name__}, not an object")
    return body


def post_json(client: httpx.Client, url: str, api_key: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST ``payload`` with a bearer key; the JSON object replied, else :class:`BadReply` / an HTTP error."""
    response = client.post(url, json=payload, headers={"Authorization": f"Bearer {api_key}"})
    response.raise_for_status()
    return reply_json(response)
