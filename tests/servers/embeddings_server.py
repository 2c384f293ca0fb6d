"""A small local HTTP server speaking the OpenAI and Voyage embeddings APIs, for tests.

Both clients POST JSON ``{"model": ..., "input": [...], "encoding_format": ...}`` to
``<base_url>/embeddings`` and read ``{"data": [{"index": i, "embedding": ...}], ...}``; one
handler answers both. Vectors are deterministic (seeded by sha256 of model and text), so a
test can compare what an embedder returns with :func:`vector_for`.

Usage::

    from tests.servers.embeddings_server import EmbeddingsServer

    with EmbeddingsServer(dim=32) as server:
        os.environ["OPENAI_API_KEY"] = "test"
        emb = load_embedder("openai:m", base_url=server.base_url)
        server.fail_next(429, times=2, retry_after=0.01)   # next 2 requests answer 429
        emb.encode(["a", "b"])
        assert server.requests == 3 and server.texts_embedded == 2

Binds 127.0.0.1 on a free port; started and stopped by the test (a context manager).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from tests.servers.json_http import send_json


def vector_for(text: str, model: str, dim: int) -> np.ndarray:
    """The unit-norm float32 vector the server returns for ``text`` under ``model``."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\0{text}".encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vec / np.linalg.norm(vec)


class EmbeddingsServer:
    """OpenAI/Voyage-compatible ``POST /v1/embeddings`` on 127.0.0.1, counting requests.

    Attributes: ``requests`` (every POST, failed ones included), ``texts_embedded`` (texts in
    successful answers), ``batch_sizes`` (inputs per successful request), ``auth_headers``.
    """

    def __init__(self, dim: int = 32) -> None:
        self.dim = dim
        self.requests = 0
        self.texts_embedded = 0
        self.batch_sizes: list[int] = []
        self.auth_headers: list[str] = []
        self._failures: list[tuple[int, float | None]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """Base URL for both clients (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail_next(self, status: int = 429, times: int = 1, retry_after: float | None = 0.0) -> None:
        """Answer the next ``times`` requests with ``status`` (and a Retry-After header unless None)."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def start(self) -> "EmbeddingsServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "EmbeddingsServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, body: dict, auth: str) -> tuple[int, dict, dict]:
        """(status, headers, json body) for one request."""
        with self._lock:
            self.requests += 1
            self.auth_headers.append(auth)
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            status, retry_after = failure
            headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
            message = "rate limited" if status == 429 else "server error"
            return status, headers, {"error": {"message": message, "type": "test"}, "detail": message}
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        model = body.get("model")
        if not isinstance(texts, list) or not texts or not isinstance(model, str):
            return 400, {}, {"error": {"message": "need model and input", "type": "invalid"}, "detail": "bad"}
        dim = int(body.get("dimensions") or body.get("output_dimension") or self.dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = vector_for(text, model, dim)
            embedding = base64.b64encode(vec.tobytes()).decode() if as_base64 else vec.tolist()
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        with self._lock:
            self.texts_embedded += len(texts)
            self.batch_sizes.append(len(texts))
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {}, {"object": "list", "data": data, "model": model, "usage": usage}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(404, {}, {"error": {"message": "not found"}, "detail": "not found"})
                    return
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                self._send(*server._answer(body, self.headers.get("Authorization", "")))

            def _send(self, status: int, headers: dict, payload: dict) -> None:
                send_json(self, status, payload, headers)

            def log_message(self, *args: object) -> None:
                pass

        return Handler
