"""The table of ``ragdiag config show``."""

from __future__ import annotations

from rich.table import Table

from ragdiag.commands.config import ConfigResult


def config_table(result: ConfigResult) -> Table:
    """One row per setting: file key, environment variable, flag, effective value, source."""
    title = f"settings (file: {result.file})" if result.file else "settings (no ragdiag.toml here)"
    table = Table(title=title, title_justify="left", caption="Precedence: a command's flag > environment > file > the option's default (—).",
                  caption_justify="left")
    for column in ("setting", "environment", "flag", "value", "source"):
        table.add_column(column, overflow="fold")
    for row in result.settings:
        table.add_row(row.key, row.env, row.flag, "—" if row.value is None else row.value, row.source)
    return table
