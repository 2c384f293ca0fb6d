"""Progress bars on stderr for long loops (rich), hidden when stderr is not a terminal."""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from rich.console import Console

T = TypeVar("T")


def progress_over(console: Console, min_items: int = 20) -> Callable[[list[T], str], Iterable[T]]:
    """A function wrapping a list in a transient progress bar labelled with the given text."""
    from rich.progress import track

    def wrap(items: list[T], label: str) -> Iterable[T]:
        if len(items) < min_items or not console.is_terminal:
            return items
        return track(items, description=label, console=console, transient=True)

    return wrap
