"""The LLM run summary (calls, cache hits, retries, tokens, cost, coverage) as a rich table."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def summary_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a generate/grade run summary, in reading order."""
    from ragdiag.llm.runner import format_cost

    rows: list[tuple[str, Any]] = [
        ("items", summary["items"]), ("covered", f"{summary['covered']} ({summary['coverage']:.1%})"),
        ("requests", summary["requests"]), ("calls sent", summary["calls"]), ("cache hits", summary["cache_hits"]),
        ("shared in flight", summary["shared"]), ("retries", summary["retries"]), ("failed calls", summary["failures"]),
        ("tokens in / out", f"{summary['prompt_tokens']} / {summary['completion_tokens']}"),
        ("cost", format_cost(summary["cost"])), ("seconds", summary["seconds"]),
    ]
    if summary.get("batch_calls"):  # --batch: what the calls cost at batch and at synchronous prices
        rows[8:8] = [("batch calls", summary["batch_calls"]),
                     ("cost batch / sync", f"{format_cost(summary['cost_batch'])} / {format_cost(summary['cost_sync'])}")]
    for key in ("missing_grades", "no_answer"):
        if key in summary:
            rows.append((key.replace("_", " "), summary[key]))
    for key, value in summary.get("agreement", {}).items():
        if key not in ("judges", "repeats"):
            rows.append((key.replace("_", " "), "n/a" if value is None else f"{value:.3f}"))
    return [(name, str(value)) for name, value in rows]


def render_summary(title: str, summary: dict[str, Any], outputs: dict[str, Path]) -> None:
    """Print the run summary table to stdout, followed by where the files went."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=False)
    for name, value in summary_rows(summary):
        table.add_row(name, value)
    for name, path in outputs.items():
        table.add_row(name, str(path))
    Console().print(table)
