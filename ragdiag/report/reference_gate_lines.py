"""The reference-quality gate in words: what ``correlate`` left out, and which verdicts it withheld."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdiag.results.correlate import CorrelateResult


def _kinds(by_kind: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in by_kind.items() if count)


def gate_line(report: CorrelateResult) -> str | None:
    """One line on the rows whose ideal answer is degenerate (None when the gate found none or did not apply)."""
    gate = report.meta.reference_gate
    if gate is None or not gate.applied or not gate.degenerate_rows:
        return None
    rows = gate.rows_checked
    if gate.keep_degenerate:
        return (f"reference gate: {gate.degenerate_rows} of {rows} rows have a degenerate ideal answer "
                f"({_kinds(gate.by_kind)}); kept (--keep-degenerate), {gate.excluded_rows} without a grade left out")
    return (f"reference gate: {gate.excluded_rows} of {rows} rows left out, their ideal answer is degenerate "
            f"({_kinds(gate.by_kind)}); --keep-degenerate uses them")


def withheld_lines(report: CorrelateResult) -> list[str]:
    """One line per verdict withheld because more than half of one of its segments was left out."""
    return [entry.message for entry in report.verdicts_withheld or []]
