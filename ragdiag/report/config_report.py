"""The table of ``ragdiag config show``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ragdiag.results.config import ConfigResult


def config_table(result: ConfigResult) -> Table:
    """One row per setting: file key, effective value, source, environment variable (names never wrapped)."""
    title = f"settings (file: {result.file})" if result.file else "settings (no ragdiag.toml here)"
    table = Table(title=Text(title), title_justify="left", caption="Precedence: a command's flag > environment > file > the option's default (—).",
                  caption_justify="left")
    table.add_column("setting", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", no_wrap=True)
    table.add_column("environment", no_wrap=True)
    for row in result.settings:
        # values and paths are data, never rich markup (a value "[/x]" is shown as written)
        table.add_row(Text(row.key), Text("—" if row.value is None else row.value), Text(row.source), Text(row.env))
    return table
