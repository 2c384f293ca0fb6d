"""How many requests a run keeps in flight at once (issue 28 §3): a local server with fewer slots
than ``--workers`` queues the extra requests, they time out, and each retry re-sends a prompt the
server is still processing. So:

- before the first request, the slot count the server publishes is read (llama.cpp's
  ``GET /props`` → ``total_slots``, at the server's root) and at most that many requests are sent
  at once, whatever ``--workers`` says;
- on every timeout the limit is halved (at least 1) before the request is retried (multiplicative
  decrease, as TCP congestion control does; Jacobson, "Congestion avoidance and control", 1988);
- what was adapted is reported (:meth:`InFlightLimit.report`, in the manifest's ``run`` block and on
  stderr). The worker threads stay; the extra ones wait for a free place.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_TIMEOUT_TYPES = {"APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout", "WriteTimeout",
                  "PoolTimeout", "Timeout"}


def is_timeout(err: BaseException) -> bool:
    """Whether ``err`` is a request timeout (the openai SDK's, httpx's)."""
    return any(t.__name__ in _TIMEOUT_TYPES for t in type(err).__mro__)


def read_slots(base_url: str, api_key: str, timeout: float) -> int | None:
    """``total_slots`` of ``GET {root}/props`` (llama.cpp's server; root = ``base_url`` without its
    ``/v1``), or None when the server publishes none or cannot be asked."""
    from ragdiag.remote.transport import http_client

    parts = urlsplit(base_url)
    root = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/").removesuffix("/v1"), "", ""))
    try:
        with http_client(min(timeout, 5.0)) as client:
            response = client.get(root + "/props", headers={"Authorization": f"Bearer {api_key}"})
        value = response.json().get("total_slots") if response.status_code == 200 else None
    except Exception:  # a server without /props, or any answer that is not one: no slot count
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class InFlightLimit:
    """At most :attr:`limit` requests in flight across a run's worker threads."""

    def __init__(self, workers: int) -> None:
        self.workers = self.limit = workers
        self.server_slots: int | None = None
        self.timeouts = 0
        self.events: list[str] = []
        self.told: set[str] = set()  # events already printed
        self._busy = 0
        self._cond = threading.Condition()

    def use_server_slots(self, slots: int | None) -> None:
        """Send at most ``slots`` requests at once (the count the server published)."""
        with self._cond:
            self.server_slots = slots
            if slots is not None and slots < self.limit:
                self.events.append(f"the server publishes {slots} slot(s) (/props total_slots): {slots} request(s) "
                                   f"in flight instead of {self.limit} (--workers {self.workers})")
                self.limit = slots

    @contextmanager
    def place(self) -> Iterator[None]:
        """Hold one of the :attr:`limit` places while a request is in flight."""
        with self._cond:
            while self._busy >= self.limit:
                self._cond.wait()
            self._busy += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def after_error(self, err: BaseException) -> None:
        """Before a retry: a timeout halves the limit."""
        if not is_timeout(err):
            return
        with self._cond:
            self.timeouts += 1
            if self.limit > 1:
                self.events.append(f"timeout: {self.limit} → {self.limit // 2} request(s) in flight")
                self.limit //= 2

    def report(self) -> dict[str, Any] | None:
        """What was adapted (None when nothing was)."""
        if not self.events and not self.timeouts:
            return None
        return {"workers": self.workers, "server_slots": self.server_slots, "in_flight": self.limit,
                "timeouts": self.timeouts, "adapted": list(self.events)}
