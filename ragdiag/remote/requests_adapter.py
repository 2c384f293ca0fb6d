"""A ``requests`` adapter that sends through the one httpx transport seam (for SDKs built on ``requests``).

The voyageai SDK talks through a ``requests.Session`` (``voyageai.requestssession``). :func:`seam_session`
gives it one whose every request goes to the client that :func:`ragdiag.remote.transport.http_client`
builds (handed in by :func:`~ragdiag.remote.transport.voyage_client`), so
``use_transport(httpx.MockTransport(...))`` drives it exactly as it drives the openai SDK, and the real
transport reaches real servers. The transport is looked up at each send (the SDK keeps one session
per thread for minutes). httpx timeouts come back as ``requests`` timeouts and other transport
failures as ``requests`` connection errors, which the SDK turns into its own exception types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

DEFAULT_TIMEOUT_S = 60.0


def _seconds(timeout: Any) -> float:
    """A requests timeout (seconds, ``(connect, read)`` or None) as one number of seconds for httpx."""
    if isinstance(timeout, tuple):
        timeout = max((t for t in timeout if t is not None), default=None)
    return float(timeout) if timeout else DEFAULT_TIMEOUT_S


def _headers(request: requests.PreparedRequest) -> dict[str, str | bytes]:
    """The request's headers less ``Content-Length`` (httpx sets it from the body it sends)."""
    return {k: v for k, v in request.headers.items() if k.lower() != "content-length"}


class HttpxAdapter(BaseAdapter):
    """Forwards each ``PreparedRequest`` to the installed httpx transport and returns a ``requests.Response``."""

    def __init__(self, current_transport: Callable[[], Any], http_client: Callable[[float], httpx.Client]) -> None:
        super().__init__()
        self._current_transport, self._http_client = current_transport, http_client
        self._client: httpx.Client | None = None
        self._transport: Any = None

    def _http(self, timeout: float) -> httpx.Client:
        """The httpx client of the transport installed now (rebuilt when a test installs another)."""
        transport = self._current_transport()
        if self._client is None or transport is not self._transport:
            if self._client is not None:
                self._client.close()
            self._client, self._transport = self._http_client(timeout), transport
        return self._client

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None, verify: Any = True,
             cert: Any = None, proxies: Any = None) -> requests.Response:
        seconds = _seconds(timeout)
        body = request.body.encode("utf-8") if isinstance(request.body, str) else request.body
        try:
            # httpx's types are narrower than what it takes: requests types a body as bytes, an iterable or a
            # file (the SDK sends JSON bytes; httpx streams any iterable), and a header value as str or bytes
            # (httpx normalises either, but its HeaderTypes has no mapping that mixes them)
            reply = self._http(seconds).request(request.method or "GET", request.url or "", timeout=seconds,
                                                content=body, headers=_headers(request))  # type: ignore[arg-type]
        except httpx.TimeoutException as err:
            raise requests.exceptions.Timeout(str(err) or type(err).__name__, request=request) from err
        except httpx.TransportError as err:
            raise requests.exceptions.ConnectionError(str(err) or type(err).__name__, request=request) from err
        response = requests.Response()
        response.status_code = reply.status_code
        response.reason = reply.reason_phrase
        response.headers = CaseInsensitiveDict(
            {k: v for k, v in reply.headers.items() if k.lower() not in ("content-encoding", "transfer-encoding")})
        response._content = reply.content  # already decoded by httpx
        response.encoding = reply.encoding
        response.url = str(reply.url)
        response.request = request
        response.connection = self  # type: ignore[assignment]  # requests types it HTTPAdapter; any adapter sends
        return response

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def seam_session(current_transport: Callable[[], Any], http_client: Callable[[float], httpx.Client]) -> requests.Session:
    """A ``requests.Session`` whose http and https requests all go through :class:`HttpxAdapter`."""
    session = requests.Session()
    session.trust_env = False  # httpx's client already reads the proxy environment
    adapter = HttpxAdapter(current_transport, http_client)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
