"""Checks of keys and endpoints before any local work: an API embedder without its key, or a
server that cannot be reached, fails in about a second instead of after minutes of embedding.

- ``openai:`` / ``voyage:`` embedders need ``OPENAI_API_KEY`` / ``VOYAGE_API_KEY`` set (any value
  for a local server);
- a given ``--base-url`` / ``--embed-base-url`` must accept a TCP connection within
  :data:`CONNECT_TIMEOUT_S` (``socket.create_connection``), unless ``--cache replay`` sends nothing.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from ragdiag.errors import RagdiagError
from ragdiag.remote.urls import check_base_url, redact_url

CONNECT_TIMEOUT_S = 1.5
KEY_OF_PROVIDER = {"openai": "OPENAI_API_KEY", "voyage": "VOYAGE_API_KEY"}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def check_embedder_keys(specs: Iterable[str | None], flag: str = "--embedder") -> None:
    """Every API embedder in ``specs`` (``openai:MODEL``, ``voyage:MODEL``) has its key set."""
    for spec in specs:
        provider = (spec or "").split(":", 1)[0].strip().lower()
        env = KEY_OF_PROVIDER.get(provider) if ":" in (spec or "") else None
        if env and not os.environ.get(env):
            shown = f"{flag}{spec}" if flag.endswith(":") else f"{flag} {spec}"
            raise RagdiagError(f"{shown}: ${env} is not set (any value works for a local server); "
                               "nothing was embedded yet")


def check_reachable(url: str | None, flag: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """``url``'s host accepts a TCP connection within ``timeout`` seconds (None: nothing to check)."""
    if not url:
        return
    parts = urlsplit(check_base_url(url))
    host, port = parts.hostname or "", parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 80)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        reason = f"no answer within {timeout:g} s" if isinstance(err, TimeoutError) else (
            err.strerror or type(err).__name__)
        raise RagdiagError(f"{flag} {redact_url(url)}: cannot reach {host}:{port} ({reason}); is the server running "
                           "and the URL right? Nothing was computed yet (with a filled cache, --cache replay needs "
                           "no server)") from None


def preflight(*, embedders: Iterable[str | None] = (), embed_base_url: str | None = None,
              llm_base_url: str | None = None, cache_mode: str = "rw", embedder_flag: str = "--embedder") -> None:
    """Keys of API embedders, then the embedding and LLM servers given, before any local work."""
    named = [e for e in embedders if e]
    check_embedder_keys(named, embedder_flag)
    if any(":" in e and e.split(":", 1)[0].lower() in KEY_OF_PROVIDER for e in named):
        check_reachable(embed_base_url, "--embed-base-url")
    if cache_mode != "replay":
        check_reachable(llm_base_url, "--base-url")
