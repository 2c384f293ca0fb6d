"""One base for the local OpenAI-compatible test servers (127.0.0.1 only).

A subclass names the route it answers (``route = "/chat/completions"``) and builds the JSON of a
successful reply in :meth:`LocalServer.reply`; the base does the rest, the same way for every
server:

- lifecycle: ``start()`` / ``stop()`` / ``with Server() as s``; ``base_url`` is
  ``http://127.0.0.1:PORT/v1``; ``GET /v1/models`` lists :attr:`models` (the endpoint check);
- failure knobs (same defaults and argument order everywhere):
  ``fail_next(status, times=1, retry_after=None)``, ``fail_always(status=500, retry_after=None)``
  (``None`` turns it off), ``fail_after(successes, status=500, retry_after=None)``;
- malformed 200 replies: ``malformed_next(kind, times=1)`` with a kind from :data:`RAW_KINDS`
  (``not-json``, ``html``, ``empty``) or from the subclass's :attr:`json_kinds` (a well-formed JSON
  body missing what the client needs, e.g. ``no-choices``);
- ``api_key``: when set, a request with another bearer token gets 401;
- ``latency`` seconds before each reply;
- counters: ``requests`` (every POST on the route, counted on arrival), ``completed`` (well-formed
  200 replies), ``bodies`` (request JSON), ``statuses``, ``auth_headers``, ``model_list_requests``.

Replies are computed by the test server, never by a model.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from tests.servers.json_http import send_bytes, send_json

RAW_KINDS: dict[str, tuple[bytes, str]] = {
    "not-json": (b'{"choices": [ this is not json', "application/json"),
    "html": (b"<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>",
             "text/html"),
    "empty": (b"", "application/json"),
}


class LocalServer:
    """HTTP server on a free port of 127.0.0.1 answering ``POST /v1{route}`` and ``GET /v1/models``."""

    route = "/"
    json_kinds: tuple[str, ...] = ()
    models: tuple[str, ...] = ("test-model",)

    def __init__(self, latency: float = 0.0, api_key: str | None = None) -> None:
        self.latency = latency
        self.api_key = api_key
        self.requests = 0
        self.completed = 0
        self.model_list_requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.auth_headers: list[str] = []
        self._failures: collections.deque[tuple[int, float | None]] = collections.deque()
        self._malformed: collections.deque[str] = collections.deque()
        self._always: tuple[int, float | None] | None = None
        self._after: tuple[int, int, float | None] | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0  # 0: a free port; a fixed one for a server a user starts (python -m tests.servers.chat_server)

    # -- knobs ---------------------------------------------------------------------------------
    def fail_next(self, status: int, times: int = 1, retry_after: float | None = None) -> None:
        """The next ``times`` requests answer ``status`` (with ``Retry-After`` if given)."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def fail_always(self, status: int | None = 500, retry_after: float | None = None) -> None:
        """Every request answers ``status`` from now on (None: back to normal)."""
        with self._lock:
            self._always = None if status is None else (status, retry_after)

    def fail_after(self, successes: int | None, status: int = 500, retry_after: float | None = None) -> None:
        """After ``successes`` more 200 replies, every request answers ``status`` (None: back to normal)."""
        with self._lock:
            self._after = None if successes is None else (self.completed + successes, status, retry_after)

    def malformed_next(self, kind: str, times: int = 1) -> None:
        """The next ``times`` requests get a 200 whose body is malformed in the way ``kind`` names."""
        if kind not in RAW_KINDS and kind not in self.json_kinds:
            raise ValueError(f"unknown malformed kind {kind!r}: {sorted(RAW_KINDS) + list(self.json_kinds)}")
        with self._lock:
            self._malformed.extend([kind] * times)

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def forwarding_transport(self):
        """An ``httpx.MockTransport`` sending every request, whatever its host and port, to this server.

        With ``ragdiag.remote.transport.use_transport`` it lets a recording use a fixed base URL (cache
        keys hold scheme, host, port and path) while the replies come from this server's free port.
        """
        import httpx

        port = self._httpd.server_address[1] if self._httpd else None
        assert port is not None, "server not started"
        upstream = httpx.Client()

        def forward(request: httpx.Request) -> httpx.Response:
            url = request.url.copy_with(scheme="http", host="127.0.0.1", port=port)
            reply = upstream.request(request.method, url, headers=request.headers, content=request.content)
            headers = {k: v for k, v in reply.headers.items() if k.lower() not in ("content-length", "content-encoding")}
            return httpx.Response(reply.status_code, headers=headers, content=reply.content)

        return httpx.MockTransport(forward)

    # -- what subclasses provide ---------------------------------------------------------------
    def get_route(self, path: str) -> dict[str, Any] | None:
        """The JSON of another ``GET`` route a subclass serves (e.g. llama.cpp's ``/props``), else None."""
        return None

    def model_entries(self) -> list[dict[str, Any]]:
        """The ``data`` list of ``GET /v1/models`` (a subclass may add fields, e.g. a context length)."""
        return [{"id": m, "object": "model"} for m in self.models]

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, JSON payload) for a request that is not made to fail; called under no lock."""
        raise NotImplementedError

    def malformed_payload(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON body for one of :attr:`json_kinds`."""
        raise NotImplementedError

    # -- request handling ----------------------------------------------------------------------
    def _failure(self, auth: str) -> tuple[int, float | None] | str | None:
        """A forced failure (status, retry_after), a malformed kind, or None for a normal reply."""
        with self._lock:
            if self.api_key is not None and auth != f"Bearer {self.api_key}":
                return 401, None
            if self._failures:
                return self._failures.popleft()
            if self._malformed:
                return self._malformed.popleft()
            if self._always is not None:
                return self._always
            if self._after is not None and self.completed >= self._after[0]:
                return self._after[1], self._after[2]
        return None

    def _respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        auth = handler.headers.get("Authorization", "")
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            self.auth_headers.append(auth)
        if self.latency:
            time.sleep(self.latency)
        failure = self._failure(auth)
        if isinstance(failure, str):
            self._record(200)
            if failure in RAW_KINDS:
                send_bytes(handler, 200, *RAW_KINDS[failure])
            else:
                send_json(handler, 200, self.malformed_payload(failure, body), {})
            return
        if failure is not None:
            status, retry_after = failure
            self._record(status)
            headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
            message = {401: "invalid api key", 429: "rate limited"}.get(status, f"test server status {status}")
            send_json(handler, status, {"error": {"message": message, "type": "test"}, "detail": message}, headers)
            return
        status, payload = self.reply(body)
        with self._lock:
            self.statuses.append(status)
            if status == 200:
                self.completed += 1
        send_json(handler, status, payload, {})

    def _record(self, status: int) -> None:
        with self._lock:
            self.statuses.append(status)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in two writes; with Nagle's algorithm on, the body waits for the
            # client's delayed ACK of the headers (~40 ms a reply on a kept-alive connection)
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                extra = server.get_route(self.path.rstrip("/"))
                if extra is not None:
                    send_json(self, 200, extra, {})
                    return
                if self.path.rstrip("/") != "/v1/models":
                    send_json(self, 404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                with server._lock:
                    server.model_list_requests += 1
                    refused = server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}"
                if refused:
                    send_json(self, 401, {"error": {"message": "invalid api key", "type": "test"}}, {})
                    return
                send_json(self, 200, {"object": "list", "data": server.model_entries()}, {})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.rstrip("/") != "/v1" + server.route:
                    send_json(self, 404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                server._respond(self, body if isinstance(body, dict) else {})

        return Handler


Server = TypeVar("Server", bound=LocalServer)


@contextmanager
def serving(monkeypatch: Any, server: Server) -> Iterator[Server]:
    """``server`` running, with the dummy ``OPENAI_API_KEY`` the openai client needs and no
    ``OPENAI_BASE_URL`` from the environment (a test fixture's usual setting); stopped on exit."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with server:
        yield server
