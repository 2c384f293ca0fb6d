"""``correlate``'s side of the reference-quality gate: leave out rows whose ideal answer is degenerate.

A grade measured against a refusal or an echo of the prompt says nothing about the top-K answer,
so such rows are excluded by default (``--keep-degenerate`` keeps those that have a grade), counted
per kind and per segment. A verdict is withheld for a (subset, side) when more than
:data:`MAX_EXCLUDED_SHARE` of the rows of one of its segments were excluded: what is left is not the
segment any more (docs/methods.md, "Reference-quality gate").
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.data.reference_gate import KINDS
from ragdiag.errors import RagdiagError
from ragdiag.metrics.segments import segment_rows

MAX_EXCLUDED_SHARE = 0.5


def exclude_degenerate(table: GradedTable, segments: str, keep: bool) -> tuple[GradedTable, dict[str, Any]]:
    """The table to correlate and the ``reference_gate`` block of the result.

    Without a gate (``table.degenerate`` is None) or without ideal-answer texts, the table is returned
    as it is (minus nothing) and the block says why the gate did not apply.
    """
    info: dict[str, Any] = {**(table.reference_gate or {}), "keep_degenerate": keep,
                            "max_excluded_share": MAX_EXCLUDED_SHARE}
    graded = ~np.isnan(table.grade)
    if table.degenerate is None or not (table.reference_gate or {}).get("applied"):
        info.update(applied=False, excluded_rows=0, segments=[],
                    reason=None if table.degenerate is None else "the file carries no ideal-answer texts")
        return table.take(graded) if table.degenerate is not None else table, info
    flagged = table.degenerate
    excluded = flagged & ~graded if keep else flagged
    # every degenerate row
    kinds = Counter(itertools.compress(table.degenerate_kinds or [], flagged.tolist())) if flagged.any() else Counter()
    per_segment = []
    if excluded.any():
        seg_of_row, keys, sides = segment_rows(table, segments)
        totals = np.bincount(seg_of_row, minlength=len(keys)).tolist()
        outs = np.bincount(seg_of_row[excluded], minlength=len(keys)).tolist()
        for code, (key, total, out) in enumerate(zip(keys, totals, outs)):
            if out:
                per_segment.append({"segment": key, "subset": key.split("^")[1], "side": sides[code],
                                    "rows": total, "excluded": out, "share": out / total})
    info.update(applied=True, rows_checked=len(table), excluded_rows=int(excluded.sum()),
                degenerate_rows=int(flagged.sum()), kept_degenerate_rows=int((flagged & ~excluded).sum()),
                by_kind={kind: kinds.get(kind, 0) for kind in KINDS}, segments=per_segment)
    kept = table.take(~excluded & graded)
    if len(kept) == 0 and excluded.any():
        shown = ", ".join(f"{k} {n}" for k, n in kinds.items())
        raise RagdiagError(f"{table.source.name}: all {int(excluded.sum())} graded rows have a degenerate ideal answer "
                           f"({shown}): nothing to correlate. Check the ideal answers, or --keep-degenerate to "
                           "use them anyway")
    return kept, info


def withhold_verdicts(report: dict[str, Any], info: dict[str, Any]) -> None:
    """Move the verdicts of every (subset, side) with a segment more than half excluded to
    ``verdicts_withheld``, each with the one line that says why."""
    if not info.get("applied") or info.get("keep_degenerate"):
        report["verdicts_withheld"] = []
        return
    worst: dict[tuple[str, str], dict[str, Any]] = {}
    for seg in info["segments"]:
        group = (seg["subset"], seg["side"])
        if seg["share"] > MAX_EXCLUDED_SHARE and seg["share"] > worst.get(group, {}).get("share", -1):
            worst[group] = seg
    kept, withheld = [], []
    for verdict in report["verdicts"]:
        seg = worst.pop((verdict["subset"], verdict["side"]), None)
        if seg is None:
            kept.append(verdict)
        else:
            withheld.append(_withheld(verdict["subset"], verdict["side"], seg))
    withheld += [_withheld(subset, side, seg) for (subset, side), seg in sorted(worst.items())]  # nothing left to judge
    report["verdicts"], report["verdicts_withheld"] = kept, withheld


def _withheld(subset: str, side: str, seg: dict[str, Any]) -> dict[str, Any]:
    where = subset if side in ("pooled", "all") else f"{subset}, {side}"
    line = (f"{where}: no verdict — {100 * seg['share']:.0f}% of segment {seg['segment']} ({seg['excluded']} of "
            f"{seg['rows']} rows) was graded against a degenerate ideal answer and left out; "
            "--keep-degenerate uses those rows anyway")
    return {"subset": subset, "side": side, "segment": seg["segment"], "share": seg["share"],
            "excluded": seg["excluded"], "rows": seg["rows"], "message": line}
