"""Coverage per K and per segment: missing answers are not missing at random.

Coverage of a group = rows with a result (answer, grade) / rows in the group. A failed call is more
likely at large K (longer prompts), so a comparison across K on the rows that happen to be covered is
biased; :func:`coverage_gap` is the largest difference between two groups' coverage, in points
(warned about above :data:`GAP_POINTS` = 10), and :func:`complete_queries` keeps only the queries
covered at every K (complete cases, Little & Rubin, *Statistical Analysis with Missing Data*, 2019, §3.2).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.errors import RagdiagError
from ragdiag.metrics.segments import segment_rows

GAP_POINTS = 10.0


def _entry(group: Any, items: int, covered: int) -> dict[str, Any]:
    return {"group": group, "items": items, "covered": covered, "coverage": covered / items if items else 1.0}


def coverage_by(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Any],
                covered: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """One entry per value of ``key(row)`` (sorted): items, covered and coverage = covered / items."""
    counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        cell = counts[key(row)]
        cell[0] += 1
        cell[1] += bool(covered(row))
    return [_entry(group, n, c) for group, (n, c) in sorted(counts.items(), key=lambda kv: str(kv[0]))]


def coverage_gap(entries: list[dict[str, Any]]) -> float:
    """Largest minus smallest coverage among the groups, in percentage points (0 for fewer than two)."""
    values = [e["coverage"] for e in entries if e["items"]]
    return 100.0 * (max(values) - min(values)) if len(values) > 1 else 0.0


def topk_coverage(rows: list[dict[str, Any]], covered: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The summary block of a generate/grade run over top-K rows: per K, per (E, K) segment, and the gap."""
    topk = [r for r in rows if r.get("kind", "topK") == "topK"]
    by_k = coverage_by(topk, lambda r: r["K"], covered)
    for entry in by_k:
        entry["K"] = entry.pop("group")
    by_segment = coverage_by(topk, lambda r: f"{r['E']} K={r['K']}", covered)
    for entry in by_segment:
        entry["segment"] = entry.pop("group")
    gap = coverage_gap(by_k)
    return {"by_K": by_k, "by_segment": by_segment, "gap_points_across_K": round(gap, 1),
            "uneven": gap > GAP_POINTS}


def complete_queries(rows: list[tuple[str, int, bool]]) -> set[str]:
    """Query ids covered at every K of the data: given (query id, K, covered) per row, the ids whose
    rows are all covered and that have a covered row at each K present anywhere."""
    all_k = {k for _, k, _ in rows}
    seen: dict[str, set[int]] = defaultdict(set)
    broken: set[str] = set()
    for query, k, ok in rows:
        if ok:
            seen[query].add(k)
        else:
            broken.add(query)
    return {q for q, ks in seen.items() if q not in broken and ks == all_k}


def coverage_line(block: dict[str, Any], what: str = "answered") -> str:
    """``answered per K: K=1 100% (6/6), K=3 17% (1/6)`` (+ a warning when uneven)."""
    parts = [f"K={e['K']} {100 * e['coverage']:.0f}% ({e['covered']}/{e['items']})" for e in block["by_K"]]
    line = f"{what} per K: " + ", ".join(parts)
    if block.get("uneven"):
        line += (f" — coverage differs by {block['gap_points_across_K']:.0f} points across K: a comparison across "
                 "K on these rows is biased (correlate --complete-cases keeps queries covered at every K)")
    return line


def _counts(codes: np.ndarray, covered: np.ndarray, groups: int = 0) -> tuple[list[int], list[int]]:
    """Rows per code 0..groups−1 (at least) and the covered ones among them."""
    return (np.bincount(codes, minlength=groups).tolist(),
            np.bincount(codes[covered], minlength=groups).tolist())


def table_coverage(table: GradedTable, segmentation: str) -> dict[str, Any]:
    """Coverage of a graded table (rows with a grade / all rows, null grades included) per K and per
    segment of ``segmentation``, the two gaps in points, and whether either exceeds :data:`GAP_POINTS`."""
    full = table.with_missing if table.with_missing is not None else table
    graded = np.isfinite(full.grade)
    ks, k_code = np.unique(full.K, return_inverse=True)
    by_k = [_entry(int(k), items, covered) for k, items, covered in zip(ks.tolist(), *_counts(k_code.ravel(), graded))]
    for entry in by_k:
        entry["K"] = entry.pop("group")
    by_segment = []
    if len(full):
        codes, keys, _ = segment_rows(full, segmentation)
        for key, items, covered in zip(keys, *_counts(codes, graded, len(keys))):
            entry = _entry(key, items, covered)
            entry["segment"] = entry.pop("group")
            by_segment.append(entry)
    gap_k, gap_segments = coverage_gap(by_k), coverage_gap(by_segment)
    return {"by_K": by_k, "by_segment": by_segment, "gap_points_across_K": round(gap_k, 1),
            "gap_points_across_segments": round(gap_segments, 1),
            "uneven": gap_k > GAP_POINTS or gap_segments > GAP_POINTS, "threshold_points": GAP_POINTS}


def complete_case_table(table: GradedTable) -> tuple[GradedTable, dict[str, Any]]:
    """The graded rows of the queries graded at every K (:func:`complete_queries`), and what was kept."""
    full = table.with_missing if table.with_missing is not None else table
    names = np.asarray(full.query_names, dtype=object)[full.query] if len(full) else np.zeros(0, dtype=object)
    keep_ids = complete_queries(list(zip(names.tolist(), full.K.tolist(), np.isfinite(full.grade).tolist())))
    mask = np.isin(np.asarray(table.query_names, dtype=object)[table.query], list(keep_ids)) if len(table) else \
        np.zeros(0, dtype=bool)
    if not mask.any():
        ks = ", ".join(str(k) for k in sorted(set(full.K.tolist())))
        raise RagdiagError(f"--complete-cases: no query is graded at every K (K = {ks}); nothing is left to correlate")
    kept = table.take(mask)
    info = {"used": True, "queries": len(set(names.tolist())), "queries_kept": len(keep_ids),
            "rows_before": len(table), "rows_kept": int(mask.sum())}
    return kept, info
