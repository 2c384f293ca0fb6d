"""``ragdiag data get|list`` on the terminal: what was fetched (or verified) and where, and the table
of every dataset ragdiag can fetch with its state in the data folder. ``result`` is a
:class:`ragdiag.results.data.GetResult` / ``ListResult``."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def get_lines(result: Any) -> list[str]:
    counts = result.manifest["counts"]
    said = "fetched" if result.fetched else "already there, verified"
    return [f"{result.name}: {said}: {result.path}", "  " + ", ".join(f"{what} {count:,}" for what, count in counts.items()),
            *(f"  {note}" for note in result.manifest.get("notes", [])), f"  use: --corpus {result.path}"]


def print_list(result: Any, console: Console) -> None:
    table = Table(title=f"data folder {result.data_dir}")
    for column in ("name", "state", "passages", "queries", "qrels", "origin"):
        table.add_column(column, overflow="fold")
    for entry in result.sets:
        qrels = sum(v for k, v in entry.counts.items() if k.startswith("qrels/"))
        table.add_row(entry.name, entry.state, f"{entry.counts['corpus']:,}" if entry.counts else "",
                      f"{entry.counts['queries']:,}" if entry.counts else "", f"{qrels:,}" if entry.counts else "",
                      entry.origin)
    console.print(table)
    console.print("Licences and descriptions: ragdiag data list --json. Fetch one: ragdiag data get NAME.")


def inspect_lines(result: Any) -> list[str]:
    """``data inspect`` as plain lines: what the file is, the fields, samples, problems, next command."""
    import json

    used = ", ".join(f"{role} ← {name}" for role, name in result.fields_used.items()) or "(none recognised)"
    lines = [f"{result.path}: {result.kind}, {result.format}, {result.rows:,} {'files' if result.format == 'folder of documents' else 'records'}",
             f"  fields used: {used}",
             f"  fields ignored: {', '.join(result.fields_ignored) or '(none)'}",
             "  samples:"]
    lines += [f"    {json.dumps(sample, ensure_ascii=False)[:300]}" for sample in result.samples]
    lines += [f"  problem: {problem}" for problem in result.problems] or ["  problems: none found"]
    lines.append(f"  next: {result.next_command}")
    return lines
