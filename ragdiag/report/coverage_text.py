"""Coverage per K beside a correlate verdict: what was graded at each K, and which rows the verdict used.

Missing grades are not missing at random (a failed call is more likely at large K), so a verdict on
unevenly covered K compares different sets of queries; see :mod:`ragdiag.metrics.coverage`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdiag.results.correlate import CorrelateResult, Covered


def per_k_text(by_k: list[Covered]) -> str:
    """``K=1 100% (6/6), K=3 17% (1/6)`` from the coverage's ``by_K`` entries."""
    return ", ".join(f"K={e.K} {100 * e.coverage:.0f}% ({e.covered}/{e.items})" for e in by_k)


def verdict_basis(report: CorrelateResult) -> tuple[str, bool] | None:
    """(sentence saying which rows the verdict uses, whether it is a warning), or None without coverage data."""
    coverage = report.coverage
    if not coverage or not coverage.by_K:
        return None
    complete = coverage.complete_cases
    per_k = per_k_text(coverage.by_K)
    gaps = (f"coverage differs by {coverage.gap_points_across_K:.0f} points across K and "
            f"{coverage.gap_points_across_segments:.0f} across segments")
    if complete.used:
        return ((f"graded per K: {per_k}. The verdict uses complete cases only: the "
                f"{complete.queries_kept} of {complete.queries} queries graded at every K "
                f"({complete.rows_kept} of {complete.rows_before} graded rows)."), False)
    if coverage.uneven:
        return ((f"graded per K: {per_k}. Warning: {gaps} (more than "
                f"{coverage.threshold_points:g}); the verdict below uses every graded row, so it compares "
                "different queries at different K and is biased. Rerun correlate with --complete-cases to keep only "
                "the queries graded at every K."), True)
    if all(e.covered == e.items for e in coverage.by_K):
        rows = sum(e.items for e in coverage.by_K)
        return f"graded: every row at every K ({len(coverage.by_K)} cut-offs, {rows} rows).", False
    return ((f"graded per K: {per_k}. The verdict uses every graded row ({gaps}, within "
            f"{coverage.threshold_points:g})."), False)
