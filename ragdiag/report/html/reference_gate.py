"""The reference-quality gate and the grade mode in the HTML report (counts per kind, withheld verdicts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragdiag.report.html.page import esc, table
from ragdiag.report.reference_gate_lines import gate_line, withheld_lines

if TYPE_CHECKING:
    from ragdiag.results.correlate import CorrelateResult


def correlate_gate_html(doc: CorrelateResult) -> str:
    """What correlate left out because the ideal answer is degenerate, and the verdicts it withheld."""
    lines = [line for line in (gate_line(doc), *withheld_lines(doc)) if line]
    return "".join(f'<p class="note">{esc(line)}</p>' for line in lines)


def counts_html(summary: dict[str, Any]) -> str:
    """The per-kind counts of degenerate ideal and top-K answers of a generate/grade run summary."""
    gate = summary.get("reference_gate")
    if not isinstance(gate, dict) or not isinstance(gate.get("ideal"), dict):
        return ""
    kinds = list(gate.get("kinds") or [])
    sides = [side for side in ("ideal", "topK") if isinstance(gate.get(side), dict)]
    rows = [[kind, *(gate[side].get(kind, 0) for side in sides)] for kind in kinds]
    rows.append(["answers checked", *(gate[side].get("answers", 0) for side in sides)])
    caption = (f"reference gate ({gate.get('patterns')}, long answer > {gate.get('long_answer_ratio')}× median)"
               + (f": {gate['skipped_rows']} rows not sent to the judge" if gate.get("skipped_rows") else ""))
    return table(["degenerate kind", *(f"{side} answers" for side in sides)], rows, caption=caption)


def graded_notes(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """Extra (quantity, value) rows of a graded file: gate skips and probability-weighted grades."""
    extra: list[list[Any]] = []
    skipped = sum(1 for r in rows if isinstance(r, dict) and "skipped" in r)
    if skipped:
        extra.append(["not graded: degenerate ideal answer", skipped])
    weighted = sum(1 for r in rows if isinstance(r, dict) and isinstance(r.get("grade_probs"), list))
    if weighted:
        extra.append(["probability-weighted grades (grade_probs, --grade-mode logprobs)", weighted])
    return extra
