"""Where replies come from, read from the replies themselves: ragdiag's test servers mark every
chat completion with ``system_fingerprint = "ragdiag-test-server"``. The client notes each marked
reply (sent or read back from the call cache, which keeps the mark) in this process-wide count; the
run record of every result written afterwards holds ``test_server_replies`` (only when > 0), and
the terminal and the HTML report say so next to any verdict drawn from them."""

from __future__ import annotations

import threading
from typing import Any

TEST_SERVER_MARK = "ragdiag-test-server"
_lock = threading.Lock()
_count = 0


def origin_of(reply: Any) -> str:
    """``TEST_SERVER_MARK`` when a chat-completion body carries it, else ``""``."""
    mark = reply.get("system_fingerprint") if isinstance(reply, dict) else None
    return TEST_SERVER_MARK if mark == TEST_SERVER_MARK else ""


def note_reply(origin: str | None) -> None:
    """Count one reply of this origin (only the test-server mark is counted)."""
    global _count
    if origin == TEST_SERVER_MARK:
        with _lock:
            _count += 1


def marked_replies() -> int:
    """Test-server replies used by this process so far."""
    return _count
