"""What an HTTP SDK exception (openai, voyageai) says about retrying: its status and the wait the
server asked for in ``retry-after-ms`` / ``Retry-After``. Shared by the chat client and the API
embedders so both honour the server the same way."""

from __future__ import annotations


def http_status(err: BaseException) -> int | None:
    """The HTTP status carried by an SDK exception (openai: ``status_code``, voyageai: ``http_status``)."""
    return getattr(err, "status_code", None) or getattr(err, "http_status", None)


def retry_after_seconds(err: BaseException) -> float | None:
    """Seconds asked for by the server's ``retry-after-ms`` or ``Retry-After`` header, if any."""
    headers = getattr(getattr(err, "response", None), "headers", None) or getattr(err, "headers", None) or {}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0), ("Retry-After", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None
