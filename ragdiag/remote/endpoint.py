"""One cheap check that a server answers before a run that needs it: ``GET {base}/models``.

A dead server or a forgotten base URL fails in seconds with the (redacted) URL in the message
instead of after minutes of retries; 401/403 says the key was refused. Any other reply (200, 404 from
a server without ``/models``, 5xx) means the server is there: the run's own retries take it from
there. Callers run it only when a request must actually be sent (never in ``--cache replay``, never
when the cache answers everything).
"""

from __future__ import annotations

from urllib.parse import urlencode

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.remote.retry import Refused
from ragdiag.remote.transport import http_client
from ragdiag.remote.urls import redact_url, split_query

CHECK_TIMEOUT_S = 5.0


def check_endpoint(base_url: str, api_key: str, key_env: str, timeout: float = CHECK_TIMEOUT_S) -> int:
    """Status of ``GET {base_url}/models``; raises when the server cannot be reached or refuses the key."""
    httpx = require("httpx")
    base, query = split_query(base_url)
    url = base.rstrip("/") + "/models" + (f"?{urlencode(query)}" if query else "")
    shown = redact_url(base_url)
    with http_client(min(timeout, CHECK_TIMEOUT_S)) as client:
        try:
            response = client.get(url, headers={"Authorization": f"Bearer {api_key}"})
        except httpx.TimeoutException:
            raise RagdiagError(f"no answer from {shown} within {min(timeout, CHECK_TIMEOUT_S):g} s; is the server "
                               f"running and the base URL right?") from None
        except httpx.TransportError as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise RagdiagError(f"cannot reach {shown} ({reason}); is the server running and the base URL right?") from None
    if response.status_code in (401, 403):
        raise Refused(f"{shown} refused the API key (HTTP {response.status_code}); check ${key_env}")
    return response.status_code
