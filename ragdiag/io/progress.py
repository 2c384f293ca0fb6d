"""Progress on stderr for long loops: a rich bar on a terminal, plain lines otherwise.

In a script or a CI log (stderr not a terminal) :func:`progress_reporter` prints one line every few
seconds — ``<label>: <done>/<total> (<pct>), <rate>/s, ETA <m:ss>`` — and a last line when the work
took long enough to have printed any; short jobs stay silent. :func:`note` prints the one-line
``ragdiag: note: …`` messages (e.g. "loading model …") that must reach a log before a long silence.

It lives in ``io/`` (a base layer) so that every layer, retrieval included, reports progress the
same way: it is the package's one progress mechanism.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

LINE_EVERY_S = 5.0


def note(message: str, stream: TextIO | None = None) -> None:
    """Print ``ragdiag: note: <message>`` on stderr and flush (so it reaches a log at once)."""
    stream = stream or sys.stderr
    stream.write(f"ragdiag: note: {message}\n")
    stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class _Ticker:
    """A daemon thread calling ``tick`` every ``every`` seconds until stopped: a line keeps coming while
    one long batch (or a model load) runs, not only when work is counted."""

    def __init__(self, every: float, tick: Callable[[], None]) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(every, tick), daemon=True)
        self._thread.start()

    def _loop(self, every: float, tick: Callable[[], None]) -> None:
        while not self._stop.wait(every):
            tick()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def waiting(message: str, every: float = LINE_EVERY_S, stream: TextIO | None = None) -> Iterator[None]:
    """``ragdiag: note: <message> …`` at once, then ``ragdiag: note: still <message> (N s)`` every
    ``every`` seconds until the block ends (a model load, an index build step without a count)."""
    stream = stream or sys.stderr
    note(f"{message} …", stream)
    start = time.monotonic()
    ticker = _Ticker(every, lambda: note(f"still {message} ({time.monotonic() - start:.0f} s)", stream))
    try:
        yield
    finally:
        ticker.stop()


@contextmanager
def step(message: str, enabled: bool = True, after: float = 1.0, every: float = LINE_EVERY_S,
         stream: TextIO | None = None) -> Iterator[None]:
    """A step without a count (a BM25 or faiss build, reading a large file): silent when it ends within
    ``after`` seconds; otherwise ``ragdiag: note: <message> …`` at ``after`` seconds, then ``ragdiag:
    note: still <message> (N s)`` every ``every`` seconds until it ends. Nothing when not ``enabled``."""
    if not enabled:
        yield
        return
    stream = stream or sys.stderr
    start, stop = time.monotonic(), threading.Event()

    def report() -> None:
        if stop.wait(after):
            return
        note(f"{message} …", stream)
        while not stop.wait(every):
            note(f"still {message} ({time.monotonic() - start:.0f} s)", stream)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


class LineProgress:
    """Plain-text progress for logs: a line every ``every`` seconds with done/total, rate, ETA — also
    while a single long step runs (a ticker thread prints when no line came for ``every`` seconds)."""

    def __init__(self, label: str, total: int, every: float = LINE_EVERY_S, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.every = label, total, every
        self.stream = stream or sys.stderr
        self._clock = clock
        self.start = self._last = clock()
        self.done = 0
        self.printed = 0
        self._lock = threading.Lock()
        self._ticker: _Ticker | None = None

    def start_ticker(self) -> None:
        """Print a line whenever ``every`` seconds pass without one (until :meth:`close`); ``every = 0``
        (a line at every advance) needs none."""
        if self.every > 0:
            self._ticker = _Ticker(self.every, self._tick)

    def _tick(self) -> None:
        with self._lock:
            if self._clock() - self._last >= self.every * 0.99:
                self._last = self._clock()
                self._emit()

    def line(self) -> str:
        elapsed = max(self._clock() - self.start, 1e-9)
        rate = self.done / elapsed
        pct = f"{self.done / self.total:.0%}" if self.total else "-"
        eta = _clock((self.total - self.done) / rate) if rate > 0 and self.total >= self.done else "?"
        return f"{self.label}: {self.done:,}/{self.total:,} ({pct}), {rate:,.1f}/s, ETA {eta}"

    def _emit(self) -> None:
        self.stream.write(self.line() + "\n")
        self.stream.flush()
        self.printed += 1

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            now = self._clock()
            if now - self._last >= self.every:
                self._last = now
                self._emit()

    def close(self) -> None:
        """A last line, only when the work was long enough to have printed one already."""
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self.printed:
            self._emit()


class _RichProgress:
    def __init__(self, bar, task) -> None:
        self.bar, self.task = bar, task

    def advance(self, n: int = 1) -> None:
        self.bar.advance(self.task, n)


class _Silent:
    def advance(self, n: int = 1) -> None:
        pass


@contextmanager
def progress_reporter(label: str, total: int, enabled: bool = True, stream: TextIO | None = None) -> Iterator:
    """``with progress_reporter("embedding", n) as bar: … bar.advance(k)`` — a transient rich bar
    when stderr is a terminal, :class:`LineProgress` lines otherwise, nothing when disabled."""
    stream = stream or sys.stderr
    if not enabled:
        yield _Silent()
        return
    if stream.isatty():  # rich only for the bar: plain lines and silence do without it
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(file=stream), transient=True) as bar:
            yield _RichProgress(bar, bar.add_task(label, total=total))
        return
    lines = LineProgress(label, total, stream=stream)
    lines.start_ticker()
    try:
        yield lines
    finally:
        lines.close()
