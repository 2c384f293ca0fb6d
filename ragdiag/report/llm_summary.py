"""The LLM run summary (calls, cache hits, retries, tokens, cost, coverage) as a rich table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragdiag.results.llm_run import GateCounts, RunSummary


def summary_rows(summary: RunSummary | Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a generate/grade/label/sweep run summary, in reading order."""
    from ragdiag.llm.runner import format_cost
    from ragdiag.results.llm_run import as_summary

    s = as_summary(summary)
    c = s.stats  # the call counts
    rows: list[tuple[str, Any]] = [
        ("items", s.items), ("covered", f"{s.covered} ({s.coverage:.1%})"),
        ("requests", c.requests), ("calls sent", c.calls), ("cache hits", c.cache_hits),
        ("shared in flight", c.shared), ("retries", c.retries), ("failed calls", c.failures),
        ("tokens in / out", f"{c.prompt_tokens} / {c.completion_tokens}"),
        ("cost", format_cost(c.cost)), ("seconds", s.seconds),
    ]
    if c.batch_calls:  # --batch: what the calls cost at batch and at synchronous prices
        rows[8:8] = [("batch calls", c.batch_calls),
                     ("cost batch / sync", f"{format_cost(c.cost_batch)} / {format_cost(c.cost_sync)}")]
    if c.from_other_process:
        rows.append(("waited for another process", c.from_other_process))
    if c.capped_replies:
        from ragdiag.llm.client import MAX_REPLY_CHARS

        rows.append(("capped replies", f"{c.capped_replies} (over {MAX_REPLY_CHARS:,} characters: head, "
                                       "length and sha256 kept)"))
    for key in ("missing_grades", "no_answer", "retried_unparsed"):
        if s.has(key):
            rows.append((key.replace("_", " "), getattr(s, key)))
    rows += gate_rows(s.reference_gate)
    by_k = s.coverage_by_K
    for entry in by_k.by_K if by_k else []:
        rows.append((f"covered at K={entry.K}", f"{entry.covered} of {entry.items} ({entry.coverage:.1%})"))
    if by_k and by_k.uneven:
        rows.append(("coverage across K", f"differs by {by_k.gap_points_across_K:.0f} points: "
                                          "comparisons across K are biased"))
    for entry in s.coverage_by_point or []:
        rows.append((f"graded {entry.point}", f"{entry.covered} of {entry.items} ({entry.coverage:.1%})"))
    for key in ("context_exceeded", "context_refits", "references_cut"):
        if s.has(key):
            rows.append((key.replace("_", " "), getattr(s, key)))
    if s.lang is not None:
        rows.append(("language", f"{s.lang.setting}: " + ", ".join(f"{k} {v}" for k, v in s.lang.counts())))
    for key, value in s.agreement.values() if s.agreement else []:
        rows.append((key.replace("_", " "), "n/a" if value is None else f"{value:.3f}"))
    return [(name, str(value)) for name, value in rows]


def gate_rows(gate: GateCounts | None) -> list[tuple[str, str]]:
    """Reference-gate rows: degenerate ideal and top-K answers per kind, and rows not sent to the judge."""
    if gate is None:
        return []
    rows = []
    for counts, name in ((gate.ideal, "degenerate ideal answers"), (gate.topK, "degenerate top-K answers")):
        if isinstance(counts, dict):
            kinds = ", ".join(f"{k} {v}" for k, v in counts.items() if k not in ("total", "answers") and v)
            rows.append((name, f"{counts['total']} of {counts['answers']}" + (f" ({kinds})" if kinds else "")))
    if gate.skipped_rows is not None:
        rows.append(("not graded (degenerate ideal)", str(gate.skipped_rows)))
    return rows


def render_summary(title: str, summary: RunSummary | Mapping[str, Any], outputs: dict[str, Path]) -> None:
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
