"""The OpenAI Batch API file format: request lines in, result lines out (also vLLM ``run-batch``'s).

A request line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` where
``custom_id`` is the call-cache key (sha256 of the sorted-JSON request,
:func:`ragdiag.remote.store.request_key`) and ``body`` the chat-completions parameters the
synchronous client sends. A result line is ``{"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}`` — the OpenAI output and error files and vLLM's ``run-batch -o``
file alike. Files are split so that none holds more than ``max_requests`` lines or ``max_bytes``
bytes (OpenAI: 50,000 requests, 200 MB per batch input file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.jsonl import parse_jsonl
from ragdiag.remote.retry import BadReply

BATCH_MODES = ("openai", "vllm-file")
ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024


def request_body(request: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions body of a cache-key request (what the synchronous client sends)."""
    return {"model": request["model"], "messages": request["messages"], **request["params"]}


def request_line(key: str, request: dict[str, Any]) -> bytes:
    """One JSONL request line (newline included)."""
    line = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": request_body(request)}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def split_lines(lines: list[bytes], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list[list[int]]:
    """Indices of ``lines`` per file, in order, each file within both limits; one line that alone is
    over ``max_bytes`` cannot be sent and is an error."""
    chunks: list[list[int]] = []
    size = 0
    for index, line in enumerate(lines):
        if len(line) > max_bytes:
            raise RagdiagError(f"request {index + 1} of the batch is {len(line):,} bytes, over the {max_bytes:,}-byte "
                               "limit of one batch file; it cannot be sent as a batch (run without --batch)")
        if not chunks or len(chunks[-1]) >= max_requests or size + len(line) > max_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(index)
        size += len(line)
    return chunks


@dataclass
class Results:
    """Parsed result lines: replies by custom_id and failures (custom_id, reason)."""

    replies: dict[str, tuple[str, int, int, dict[str, Any]]] = field(default_factory=dict)  # text, tokens, body
    failures: list[dict[str, str]] = field(default_factory=list)


def _reason(row: dict[str, Any]) -> str | None:
    """Why a result line holds no answer, or None when it holds a 200 reply."""
    error, response = row.get("error"), row.get("response")
    if error:
        return str(error.get("message") or error.get("code") or error) if isinstance(error, dict) else str(error)
    if not isinstance(response, dict):
        return "no response"
    status = response.get("status_code")
    if status != 200:
        body = response.get("body")
        message = body.get("error", {}).get("message") if isinstance(body, dict) and isinstance(body.get("error"), dict) else None
        return f"HTTP {status}" + (f": {message}" if message else "")
    return None


def parse_results(data: bytes, source: str, known: dict[str, dict[str, Any]],
                  text_of: Callable[[dict[str, Any], dict[str, Any]], str], seen: dict[str, str] | None = None) -> Results:
    """Check every line before anything is used: JSON object, ``custom_id`` a request of this batch
    folder (``known``: custom_id → its cache-key request), no custom_id twice (in this file or,
    through ``seen``, in the files read before).

    ``text_of(body, request)`` is the text cached (the client's :func:`ragdiag.llm.client.stored_reply`:
    logprobs packed for a logprob request, long replies cut as the synchronous path cuts them); a 200
    response whose body has no usable text (:class:`BadReply`) is a failure.
    """
    seen = {} if seen is None else seen
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in parse_jsonl(data, source):
        where = f"{source}: line {number}"
        custom_id = row.get("custom_id") if isinstance(row, dict) else None
        if not isinstance(custom_id, str):
            raise DataError(f"{where}: field 'custom_id': missing or not a string")
        if custom_id not in known:
            raise DataError(f"{where}: custom_id '{custom_id[:16]}…' is not a request of this batch folder")
        if custom_id in seen:
            raise DataError(f"{where}: custom_id '{custom_id[:16]}…' appears twice (first at {seen[custom_id]})")
        seen[custom_id] = where
        rows.append((number, row))
    results = Results()
    for _, row in rows:
        reason = _reason(row)
        if reason is None:
            body = row["response"].get("body")
            try:
                text = text_of(body if isinstance(body, dict) else {}, known[row["custom_id"]])
            except BadReply as err:
                reason = f"unusable reply ({err})"
        if reason is not None:
            results.failures.append({"custom_id": row["custom_id"], "error": reason})
            continue
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        tokens = [usage.get(name) for name in ("prompt_tokens", "completion_tokens")]
        p_tok, c_tok = (t if isinstance(t, int) and not isinstance(t, bool) and t >= 0 else 0 for t in tokens)
        results.replies[row["custom_id"]] = (text, p_tok, c_tok, body)
    return results
