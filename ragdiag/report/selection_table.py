"""Rendering of constrained selection: the passing points with their unconstrained metrics, then one
line (how many pass, or which constraint binds)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ragdiag.bench.constraints import binding_line

_DIGITS = {"qps": 0, "zero": 0, "p50": 3, "p99": 3, "build_s": 2, "mib": 1}


def selection_table(selection: dict) -> list:
    """[table of passing points (if any), the summary line]."""
    line = Text(binding_line(selection))
    if not selection["passing"]:
        return [line]
    table = Table(title=f"Operating points meeting {' and '.join(selection['constraints'])} (unconstrained metrics)")
    table.add_column("point")
    for name in selection["unconstrained"]:
        table.add_column(name, justify="right")
    for row in selection["passing"]:
        table.add_row(row["label"], *["-" if row[n] is None else f"{row[n]:.{_DIGITS.get(n, 4)}f}"
                                      for n in selection["unconstrained"]])
    return [table, line]
