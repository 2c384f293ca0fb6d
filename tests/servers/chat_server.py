"""A local OpenAI-compatible chat-completions server for tests and benchmarks (127.0.0.1 only).

Its replies are deterministic text computed by this test server — never an LLM's output, and its
"grades" are never an LLM judgement:

- generation requests (a user message with numbered references ``[i] text``) get
  ``"From the references: "`` followed by the first ``words_per_reference`` words of each reference;
- judge requests (``Ideal answer:`` / ``Candidate answer:`` sections) get
  ``{"grade": g, "reason": "test server word overlap ..."}`` with
  g = 1 + round(4 · |ideal words ∩ candidate words| / |ideal words|);
- anything else gets ``"test server reply"``.

Knobs: ``latency`` (seconds per request), ``fail_next(status, times, retry_after)``,
``fail_always(status)``, ``fail_after(n, status)`` (failures may carry ``retry_after``), ``judge_script`` (replies used, in order, for
the next judge requests). Counters: ``requests`` (every POST, counted on arrival), ``completed`` (200 replies),
``bodies`` (every request JSON), ``statuses``.

Usage::

    with ChatServer(latency=0.05) as server:
        os.environ["OPENAI_API_KEY"] = "test"
        ... --base-url server.base_url ...
"""

from __future__ import annotations

import collections
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.servers.json_http import send_json

_REFERENCE = re.compile(r"^\[(\d+)\]\s+(.*)$", re.MULTILINE)
_JUDGE = re.compile(r"Ideal answer:\n(.*?)\n\s*\nCandidate answer:\n(.*?)\n\s*\n", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


def generation_reply(user: str, words_per_reference: int = 12) -> str | None:
    refs = _REFERENCE.findall(user)
    if not refs:
        return None
    return "From the references: " + " ".join(" ".join(text.split()[:words_per_reference]) for _, text in refs)


def judge_reply(user: str) -> str | None:
    match = _JUDGE.search(user)
    if not match:
        return None
    ideal = set(_WORD.findall(match.group(1).lower()))
    candidate = set(_WORD.findall(match.group(2).lower()))
    overlap = len(ideal & candidate) / len(ideal) if ideal else 0.0
    grade = 1 + round(4 * overlap)
    return json.dumps({"grade": grade, "reason": f"test server word overlap {overlap:.2f} (not an LLM judgement)"})


class ChatServer:
    """``POST /v1/chat/completions`` on 127.0.0.1 with deterministic replies and failure modes."""

    def __init__(self, latency: float = 0.0, words_per_reference: int = 12) -> None:
        self.latency = latency
        self.words_per_reference = words_per_reference
        self.requests = 0
        self.completed = 0
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.judge_script: collections.deque[str] = collections.deque()
        self._failures: collections.deque[tuple[int, float | None]] = collections.deque()
        self._always: tuple[int, float | None] | None = None
        self._after: tuple[int, int, float | None] | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- failure modes -------------------------------------------------------------------------
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

    def script_judge(self, *replies: str) -> None:
        """Use these replies, in order, for the next judge requests."""
        with self._lock:
            self.judge_script.extend(replies)

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "ChatServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # -- request handling ----------------------------------------------------------------------
    def _arrive(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests += 1
            self.bodies.append(body)

    def _decide(self, body: dict[str, Any]) -> tuple[int, float | None, str | None]:
        with self._lock:
            if self._failures:
                status, retry_after = self._failures.popleft()
                return status, retry_after, None
            if self._always is not None:
                return self._always[0], self._always[1], None
            if self._after is not None and self.completed >= self._after[0]:
                return self._after[1], self._after[2], None
            messages = body.get("messages", [])
            judged = [m["content"] for m in messages if "Ideal answer:" in str(m.get("content", ""))]
            user = judged[0] if judged else (messages[-1]["content"] if messages else "")
            if judged and self.judge_script:
                reply = self.judge_script.popleft()
            else:
                reply = judge_reply(user) or generation_reply(user, self.words_per_reference) or "test server reply"
            self.completed += 1
            return 200, None, reply

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                send_json(self, status, payload, headers)

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                server._arrive(body)
                if server.latency:
                    time.sleep(server.latency)
                status, retry_after, reply = server._decide(body)
                with server._lock:
                    server.statuses.append(status)
                if status != 200:
                    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
                    self._send(status, {"error": {"message": f"test server status {status}", "type": "test"}}, headers)
                    return
                prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(reply.split()),
                              "total_tokens": prompt_words + len(reply.split())},
                }, {})

        return Handler
