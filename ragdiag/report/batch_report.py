"""``ragdiag batch status|collect|cancel`` on the terminal: the folder's batch files, then what a
collect cost and what is still open. ``result`` is a :class:`ragdiag.results.batch.BatchResult`
(not imported: commands/ imports report/, never the other way)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def batch_table(result: Any) -> Table:
    table = Table(title=f"batches in {result.folder}")
    for column in ("file", "mode", "requests", "batch id", "status", "done / failed"):
        table.add_column(column)
    for e in result.entries:
        counts = e.get("counts") or {}
        table.add_row(e["file"], e["mode"], str(e["requests"]), e["batch_id"] or "-", e["status"],
                      f"{counts.get('completed', '-')} / {counts.get('failed', '-')}" if counts else "-")
    return table


def summary_lines(result: Any) -> list[str]:
    """The collect's cost at batch and synchronous prices, the cancelled batches, the open files."""
    from ragdiag.llm.runner import format_cost

    lines = []
    c = result.collected
    if result.action == "collect":
        lines.append(f"collected {c.answered} replies into the cache ({len(c.failures)} failed); cost at batch prices "
                     f"{format_cost(c.cost_batch)}, at synchronous prices {format_cost(c.cost_sync)}")
    if result.cancelled:
        lines.append(f"cancelled: {', '.join(result.cancelled)}")
    lines.append(f"{result.open} file(s) still open")
    return lines


def print_batches(result: Any, console: Console) -> None:
    console.print(batch_table(result))
