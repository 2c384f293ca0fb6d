"""The model's context length as the server reports it in ``GET {base}/models`` (``--max-prompt-tokens auto``).

Fields read, first found, on the entry whose ``id`` is the model (else the only entry): ``max_model_len``
(vLLM), ``context_length`` / ``context_window`` (LM Studio, OpenRouter and others), ``meta.n_ctx`` /
``meta.n_ctx_train`` (llama.cpp's server). OpenAI's own API and llama-cpp-python report none: then the
budget is learned from the first context-length error (:mod:`ragdiag.llm.context_errors`).
"""

from __future__ import annotations

from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.remote.transport import http_client
from ragdiag.remote.urls import redact_url

_FIELDS = ("max_model_len", "context_length", "context_window", "n_ctx")
_META_FIELDS = ("n_ctx", "n_ctx_train")


def context_from_models(body: Any, model: str) -> int | None:
    """The context length of ``model`` in a ``/models`` reply body, or None."""
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        for value in [entry.get(f) for f in _FIELDS] + [meta.get(f) for f in _META_FIELDS]:
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def read_context_length(base_url: str, api_key: str, model: str, timeout: float = 5.0) -> int | None:
    """``GET {base_url}/models`` and :func:`context_from_models`; None when the server does not say."""
    httpx = require("httpx")
    with http_client(timeout) as client:
        try:
            response = client.get(base_url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {api_key}"})
        except httpx.HTTPError as err:
            raise RagdiagError(f"--max-prompt-tokens auto: cannot read {redact_url(base_url)}/models "
                               f"({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
    if response.status_code != 200:
        return None
    try:
        return context_from_models(response.json(), model)
    except ValueError:
        return None
