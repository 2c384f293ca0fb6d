"""Writing a reply from a ``http.server`` handler, shared by the local test servers."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send_bytes(handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str,
               headers: dict[str, str] | None = None) -> None:
    """Send ``data`` as is with ``status``, ``content_type`` and extra ``headers``; a client that
    already hung up (a timeout test) is ignored instead of printing a traceback from the server thread."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str]) -> None:
    """Send ``payload`` as JSON (``NaN``/``Infinity`` written as Python's json does) with ``status``."""
    send_bytes(handler, status, json.dumps(payload).encode(), "application/json", headers)
