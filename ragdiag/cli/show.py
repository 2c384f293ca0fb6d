"""How a command's result reaches the terminal, the same for every command: the ``--format`` asked
(a table by default), with ``--out`` too, then one ``wrote PATH`` line on stderr (``--quiet``: that
line only). The rule is :func:`ragdiag.io.out_format.screen_format`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import typer

from ragdiag.io.out_format import screen_format, wrote_line


def fmt_value(fmt: Any) -> Optional[str]:
    """An option's enum value (``OutputFormat.json`` → ``"json"``), or None."""
    return getattr(fmt, "value", fmt)


def show_result(out: Optional[Path], fmt: Any, quiet: bool, table: Callable[[], None],
                text: Optional[Callable[[str], str]] = None) -> None:
    """Print the table (``table()``) or the text of the format asked (``text("json")``), then
    ``wrote OUT`` when ``out`` was written."""
    shown = screen_format(fmt_value(fmt), out, quiet)
    if shown == "table":
        table()
    elif shown is not None and text is not None:
        typer.echo(text(shown), nl=False)
    if out is not None:
        typer.echo(wrote_line(out), err=True)
