"""Client-side rate limiter: requests per minute and tokens per minute, shared by all workers.

A sliding 60-second window: a call waits until the requests (and estimated tokens) sent in the
last minute leave room for it, so long runs stay under a provider's quota instead of hitting 429s.
"""

from __future__ import annotations

import collections
import threading
import time


class RateLimiter:
    """Blocks ``acquire(tokens)`` until one more call fits within ``rpm`` and ``tpm`` (None = no limit)."""

    WINDOW = 60.0

    def __init__(self, rpm: int | None = None, tpm: int | None = None, clock=time.monotonic, sleep=time.sleep):
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._sent: collections.deque[tuple[float, int]] = collections.deque()
        self._tokens = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return bool(self.rpm or self.tpm)

    def _wait_time(self, now: float, tokens: int) -> float:
        while self._sent and now - self._sent[0][0] >= self.WINDOW:
            self._tokens -= self._sent.popleft()[1]
        waits = [0.0]
        if self.rpm and len(self._sent) >= self.rpm:
            waits.append(self._sent[len(self._sent) - self.rpm][0] + self.WINDOW - now)
        if self.tpm and self._sent and self._tokens + tokens > self.tpm:
            excess, cumulative = self._tokens + tokens - self.tpm, 0
            for stamp, used in self._sent:
                cumulative += used
                if cumulative >= excess:
                    waits.append(stamp + self.WINDOW - now)
                    break
        return max(waits)

    def acquire(self, tokens: int = 0) -> float:
        """Wait for room, record the call; returns the seconds waited."""
        if not self.active:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                delay = self._wait_time(now, tokens)
                if delay <= 0:
                    self._sent.append((now, tokens))
                    self._tokens += tokens
                    return waited
            self._sleep(delay)
            waited += delay
