"""Writing a JSON reply from a ``http.server`` handler, shared by the local test servers."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str]) -> None:
    """Send ``payload`` as JSON with ``status`` and extra ``headers``; a client that already hung up
    (a timeout test) is ignored instead of printing a traceback from the server thread."""
    data = json.dumps(payload).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True
