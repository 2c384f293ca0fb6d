"""A reader that stops early (``ragdiag compare … | head -1``) must not change the exit code.

Once a write to standard output fails with a broken pipe, the stream is pointed at the null device
(the file descriptor too, so the interpreter's last flush is quiet) and every later write is
dropped: the command runs to its end and exits with its own code (the gate's 0 or 1), not click's 1
for a broken pipe, and prints no traceback (the remedy of Python's ``signal`` documentation, "Note
on SIGPIPE")."""

from __future__ import annotations

import os
from typing import Any, TextIO


class QuietPipe:
    """Standard output that turns a broken pipe into silence (every other attribute is the stream's)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def _silence(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # no file descriptor (a test's capture): dropping the writes is enough
            pass

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install(stream: Any) -> QuietPipe:
    """``stream`` wrapped (once) in :class:`QuietPipe`."""
    return stream if isinstance(stream, QuietPipe) else QuietPipe(stream)
