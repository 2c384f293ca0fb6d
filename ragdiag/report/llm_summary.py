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
    if summary.get("from_other_process"):
        rows.append(("waited for another process", summary["from_other_process"]))
    if summary.get("capped_replies"):
        from ragdiag.llm.client import MAX_REPLY_CHARS

        rows.append(("capped replies", f"{summary['capped_replies']} (over {MAX_REPLY_CHARS:,} characters: head, "
                                       "length and sha256 kept)"))
    for key in ("missing_grades", "no_answer", "retried_unparsed"):
        if key in summary:
            rows.append((key.replace("_", " "), summary[key]))
    rows += gate_rows(summary.get("reference_gate"))
    for entry in (summary.get("coverage_by_K") or {}).get("by_K", []):
        rows.append((f"covered at K={entry['K']}", f"{entry['covered']} of {entry['items']} ({entry['coverage']:.1%})"))
    if (summary.get("coverage_by_K") or {}).get("uneven"):
        rows.append(("coverage across K", f"differs by {summary['coverage_by_K']['gap_points_across_K']:.0f} points: "
                                          "comparisons across K are biased"))
    for entry in summary.get("coverage_by_point", []):
        rows.append((f"graded {entry['point']}", f"{entry['covered']} of {entry['items']} ({entry['coverage']:.1%})"))
    for key in ("context_exceeded", "context_refits", "references_cut"):
        if key in summary:
            rows.append((key.replace("_", " "), summary[key]))
    if isinstance(summary.get("lang"), dict):
        lang = summary["lang"]
        rows.append(("language", f"{lang['setting']}: " + ", ".join(f"{k} {v}" for k, v in lang.items() if k != "setting")))
    for key, value in summary.get("agreement", {}).items():
        if key not in ("judges", "repeats"):
            rows.append((key.replace("_", " "), "n/a" if value is None else f"{value:.3f}"))
    return [(name, str(value)) for name, value in rows]


def gate_rows(gate: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Reference-gate rows: degenerate ideal and top-K answers per kind, and rows not sent to the judge."""
    if not isinstance(gate, dict):
        return []
    rows = []
    for side, name in (("ideal", "degenerate ideal answers"), ("topK", "degenerate top-K answers")):
        counts = gate.get(side)
        if isinstance(counts, dict):
            kinds = ", ".join(f"{k} {v}" for k, v in counts.items() if k not in ("total", "answers") and v)
            rows.append((name, f"{counts['total']} of {counts['answers']}" + (f" ({kinds})" if kinds else "")))
    if "skipped_rows" in gate:
        rows.append(("not graded (degenerate ideal)", str(gate["skipped_rows"])))
    return rows


def render_summary(title: str, summary: dict[str, Any], outputs: dict[str, Path]) -> None:
    """Print the run summary table to stdout, followed by where the files went."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")  # file paths fold, never cut with "…"
    for name, value in summary_rows(summary):
        table.add_row(name, value)
    for name, path in outputs.items():
        table.add_row(name, str(path))
    Console().print(table)
