"""Credentials out of anything ragdiag writes or prints: URLs and command-line arguments.

``redact_url`` drops the user-info part (``user:pw@``) of a URL and masks every query value
(``?api-key=***``); ``redact_arg`` does the same to a URL inside a command-line argument
(``--base-url=URL`` too). Used for the run record's argv, manifests, cache keys' readable parts and
error lines (through :mod:`ragdiag.remote.urls`).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str | None) -> str | None:
    """``url`` without ``user:password@`` and with every query value replaced by ``***``."""
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "<unparseable URL>"
    query = "&".join(f"{item.partition('=')[0]}=***" if "=" in item else item
                     for item in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def redact_arg(arg: str) -> str:
    """A command-line argument with the credentials of any URL in it removed (``--base-url=URL`` too)."""
    flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if "://" not in value:
        return arg
    return f"{flag}{eq}{redact_url(value)}"
