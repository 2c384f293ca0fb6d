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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console

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


class LineProgress:
    """Plain-text progress for logs: a line at most every ``every`` seconds with done/total, rate, ETA."""

    def __init__(self, label: str, total: int, every: float = LINE_EVERY_S, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.every = label, total, every
        self.stream = stream or sys.stderr
        self._clock = clock
        self.start = self._last = clock()
        self.done = 0
        self.printed = 0

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
        self.done += n
        now = self._clock()
        if now - self._last >= self.every:
            self._last = now
            self._emit()

    def close(self) -> None:
        """A last line, only when the work was long enough to have printed one already."""
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
    if stream.isatty():
        from rich.progress import Progress

        with Progress(console=Console(file=stream), transient=True) as bar:
            yield _RichProgress(bar, bar.add_task(label, total=total))
        return
    lines = LineProgress(label, total, stream=stream)
    try:
        yield lines
    finally:
        lines.close()
