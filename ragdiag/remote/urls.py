"""Base URLs: validation, redaction for anything written or logged, and the form used in cache keys.

``redact_url`` (from :mod:`ragdiag.io.redact`) drops the user-info part (``user:pw@``) and masks secret-looking query values, so a URL can go into a
manifest, an error line or a log. ``cache_url`` is what identifies a server in a cache key: scheme,
host, port (explicit, the scheme's default when absent) and path, lower-cased scheme and host, no
trailing slash, no credentials and no query — two servers on one host never share answers.

A base URL holding ``user:password@`` is refused (the SDKs would send HTTP Basic instead of the
API key); query parameters (Azure's ``?api-version=…``) are kept as query parameters of every
request: :func:`split_query` hands them to the SDK as its default query.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ragdiag.errors import RagdiagError
from ragdiag.io.redact import redact_arg, redact_url

__all__ = ["EXAMPLE", "cache_url", "check_base_url", "redact_arg", "redact_url", "split_query"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
EXAMPLE = "http://127.0.0.1:8000/v1"


def _split(url: str):
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as err:
        raise RagdiagError(f"base URL '{redact_url(url)}' is not a valid URL ({err}); expected e.g. {EXAMPLE}") from None
    return parts


def check_base_url(url: str, key_env: str = "OPENAI_API_KEY") -> str:
    """``url`` stripped, after checking it is an absolute http(s) URL with a host and no credentials
    (``key_env`` names where the key goes instead)."""
    parts = _split(url)
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise RagdiagError(f"base URL '{redact_url(url)}' is not an http(s) URL with a host; expected e.g. {EXAMPLE}")
    if "@" in parts.netloc:
        raise RagdiagError(f"base URL '{redact_url(url)}' holds a user name or password: remove it from the URL and "
                           f"put the API key in ${key_env} (it is sent as a Bearer token)")
    return url.strip()


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """(the URL without its query and fragment, its query parameters): the SDK appends its paths
    (``/chat/completions``) to the first and sends the second with every request."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), dict(parse_qsl(parts.query, keep_blank_values=True))


def cache_url(url: str) -> str:
    """``scheme://host:port/path`` of a checked base URL: the server's identity in cache keys."""
    parts = _split(check_base_url(url))
    scheme = parts.scheme.lower()
    port = parts.port or _DEFAULT_PORTS[scheme]
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}{parts.path.rstrip('/')}"
