"""Progress on stderr: rich bars over lists (:func:`progress_over`), and the line-based reporter for
logs and the ``ragdiag: note:`` helper (:mod:`ragdiag.io.progress`, re-exported here)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from rich.console import Console

from ragdiag.io.progress import LINE_EVERY_S, LineProgress, note, progress_reporter

__all__ = ["LINE_EVERY_S", "LineProgress", "note", "progress_over", "progress_reporter"]

T = TypeVar("T")


def progress_over(console: Console, min_items: int = 20) -> Callable[[list[T], str], Iterable[T]]:
    """A function wrapping a list in a transient progress bar labelled with the given text."""
    from rich.progress import track

    def wrap(items: list[T], label: str) -> Iterable[T]:
        if len(items) < min_items or not console.is_terminal:
            return items
        return track(items, description=label, console=console, transient=True)

    return wrap
