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
        server.malformed_next("html")                      # next request gets a 200 HTML page
        emb.encode(["a", "b"])
        assert server.requests == 3 and server.texts_embedded == 2

Binds 127.0.0.1 on a free port; lifecycle, failure knobs and counters come from
:class:`tests.servers.base.LocalServer`. Malformed kinds of this server, besides the raw ones:
``no-data`` (no ``data`` list), ``embedding-null``, ``wrong-count`` (one vector fewer than texts).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import numpy as np

from tests.servers.base import LocalServer


def vector_for(text: str, model: str, dim: int) -> np.ndarray:
    """The unit-norm float32 vector the server returns for ``text`` under ``model``."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\0{text}".encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vec / np.linalg.norm(vec)


class EmbeddingsServer(LocalServer):
    """OpenAI/Voyage-compatible ``POST /v1/embeddings`` on 127.0.0.1, counting requests.

    Extra counters: ``texts_embedded`` (texts in successful answers), ``batch_sizes`` (inputs per
    successful request).
    """

    route = "/embeddings"
    json_kinds = ("no-data", "embedding-null", "wrong-count")

    def __init__(self, dim: int = 32, latency: float = 0.0, api_key: str | None = None) -> None:
        super().__init__(latency, api_key)
        self.dim = dim
        self.texts_embedded = 0
        self.batch_sizes: list[int] = []

    def _vectors(self, body: dict[str, Any]) -> tuple[list[str], list[Any]] | None:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        model = body.get("model")
        if not isinstance(texts, list) or not texts or not isinstance(model, str):
            return None
        dim = int(body.get("dimensions") or body.get("output_dimension") or self.dim)
        as_base64 = body.get("encoding_format") == "base64"
        vectors = [vector_for(str(text), model, dim) for text in texts]
        return texts, [base64.b64encode(v.tobytes()).decode() if as_base64 else v.tolist() for v in vectors]

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        made = self._vectors(body)
        if made is None:
            return 400, {"error": {"message": "need model and input", "type": "invalid"}, "detail": "bad"}
        texts, embeddings = made
        with self._lock:
            self.texts_embedded += len(texts)
            self.batch_sizes.append(len(texts))
        return 200, self._listing(body, texts, embeddings)

    @staticmethod
    def _listing(body: dict[str, Any], texts: list[str], embeddings: list[Any]) -> dict[str, Any]:
        tokens = sum(len(str(t).split()) for t in texts)
        data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(embeddings)]
        return {"object": "list", "data": data, "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def malformed_payload(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        texts, embeddings = self._vectors(body) or (["x"], [[0.0] * self.dim])
        if kind == "no-data":
            return {"object": "list", "model": body.get("model")}
        if kind == "embedding-null":
            return self._listing(body, texts, [None] * len(texts))
        return self._listing(body, texts[:-1], embeddings[:-1])
