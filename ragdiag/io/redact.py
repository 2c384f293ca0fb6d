"""Credentials out of anything ragdiag writes or prints: URLs and command-line arguments.

``redact_url`` drops the user-info part (``user:pw@``) of a URL and masks the value of every
query parameter whose name looks secret (``?api-key=***``); ``redact_arg`` does the same to a URL inside a command-line argument
(``--base-url=URL`` too) and masks anything shaped like an API key (``sk-…``); ``shown_value`` quotes a
value for an error line, or says it looks like a key instead of echoing it. Used for the run record's argv, manifests, cache keys' readable parts and
error lines (through :mod:`ragdiag.remote.urls`).
"""

from __future__ import annotations

import re
from typing import overload
from urllib.parse import urlsplit

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "auth", "sig", "credential", "passfile")


def _is_secret(name: str) -> bool:
    return any(word in name.lower() for word in _SECRET_WORDS)


@overload
def redact_url(url: str) -> str: ...


@overload
def redact_url(url: None) -> None: ...


def redact_url(url: str | None) -> str | None:
    """``url`` without ``user:password@`` and with the value of every query parameter whose name
    looks secret (``api-key``, ``token``, ``password``, ``sig`` …) replaced by ``***``."""
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "<unparseable URL>"
    query = "&".join(
        f"{name}=***" if eq and _is_secret(name) else f"{name}{eq}{value}"
        for name, eq, value in (item.partition("=") for item in parts.query.split("&"))
    ) if parts.query else ""
    authority = f"//{host}" if parts.netloc or parts.scheme in ("http", "https", "postgresql", "postgres") else ""
    return f"{parts.scheme}:{authority}{parts.path}" + (f"?{query}" if query else "")


def redact_arg(arg: str) -> str:
    """A command-line argument with the credentials of any URL in it removed (``--base-url=URL`` too),
    and any part shaped like an API key (:func:`looks_like_key`) masked."""
    flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    value = _KEY_LIKE.sub("***", value)  # a value shaped like an API key is never written or shown
    if "://" not in value:
        return f"{flag}{eq}{value}"
    return f"{flag}{eq}{redact_url(value)}"


_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])(?:sk|pa|hf|ghp)[-_][A-Za-z0-9_\-]{20,}")


def looks_like_key(value: str) -> bool:
    """Whether ``value`` holds something shaped like an API key: ``sk-``, ``pa-``, ``hf_`` or ``ghp_`` and 20 or more
    key characters after it (OpenAI, Voyage, Hugging Face, GitHub)."""
    return bool(_KEY_LIKE.search(value))


def shown_value(value: str) -> str:
    """``value`` quoted for a message, or a placeholder when it looks like a key (never echoed)."""
    return "(a value that looks like an API key, not shown)" if looks_like_key(value) else repr(value)
