"""``ragdiag correlate``: max-over-α correlations of measures with grades, per segment
(paper 003 §3, docs/methods.md#3-correlation-analysis), with bootstrap intervals, paired differences and a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.errors import RagdiagError
from ragdiag.io.lists import parse_choices
from ragdiag.measures.registry import CORRELATE, DEFAULT_MEASURES
from ragdiag.metrics.alpha_grid import DEFAULT_GRID, parse_alpha_grid
from ragdiag.metrics.correlation import KINDS, correlation_curves, maximum
from ragdiag.metrics.measure_tables import (
    DistinctTable,
    GradeClasses,
    MeasureTuples,
    defined_rows,
    reads_sibling,
    row_columns,
)
from ragdiag.metrics.noise_correction import correct_for_judge_noise
from ragdiag.metrics.segments import segment_rows


@dataclass
class CorrelateOptions:
    segments: str = "ratio"
    min_samples: int = 300
    measures: tuple[str, ...] = DEFAULT_MEASURES
    kinds: tuple[str, ...] = KINDS
    alpha_grid: str = DEFAULT_GRID
    xk: float = 2.0
    exact_ties: bool = True  # False: --float-ties (the paper's float64 ranking)
    bootstrap: int = 0
    seed: int = 0
    compare: tuple[str, str] | None = None
    keep_degenerate: bool = False  # reference gate: keep rows graded against a degenerate ideal answer


@dataclass
class SegmentMeasure:
    """One (segment, measure) cell: its reduced table, maxima and bootstrap maxima."""

    segment: str
    side: str
    subset: str
    measure: str
    data: DistinctTable
    rows: np.ndarray
    maxima: dict = field(default_factory=dict)
    boot: dict[str, np.ndarray] = field(default_factory=dict)  # kind → (B,) maxima


TIE_TOLERANCE = 5e-4  # leads below this (shown as +0.000) are ties: ``tied`` lists the measures within it
_BOOTSTRAP_CELLS = 4_000_000  # replicates per batch × structures × tuples × grades, bounds memory


def parse_kinds(spec: str) -> tuple[str, ...]:
    return tuple(parse_choices(spec, KINDS, "correlation kind", "--corr"))


def _cells(table: GradedTable, opts: CorrelateOptions, alphas: np.ndarray) -> tuple[list[SegmentMeasure], dict]:
    """The (segment, measure) cells with at least ``min_samples`` rows, and the bookkeeping of what
    was left out: dropped segments with their sizes, and rows lacking the x·K sibling that E needs."""
    seg_of_row, keys, sides = segment_rows(table, opts.segments)
    all_cols = row_columns(table, opts.measures, opts.xk)
    usable = {measure: defined_rows(measure, all_cols) for measure in opts.measures}
    tuples = {measure: MeasureTuples.of(measure, all_cols, alphas if CORRELATE[measure].over_alpha else np.zeros(1),
                                        opts.exact_ties) for measure in opts.measures}
    order = np.argsort(seg_of_row, kind="stable")
    bounds = np.searchsorted(seg_of_row[order], np.arange(len(keys) + 1))
    cells = []
    dropped = []
    for index, key in enumerate(keys):
        seg_rows = order[bounds[index] : bounds[index + 1]]
        if len(seg_rows) < opts.min_samples:
            dropped.append({"segment": key, "rows": int(len(seg_rows))})
        seg_classes = None
        for measure in opts.measures:
            rows = seg_rows[usable[measure][seg_rows]]
            if len(rows) < opts.min_samples or len(rows) == 0:
                continue
            if len(rows) < len(seg_rows):
                classes = GradeClasses.of(table.grade[rows])
            else:  # every row of the segment: its classes, computed once
                seg_classes = seg_classes or GradeClasses.of(table.grade[seg_rows])
                classes = seg_classes
            subset = key.split("^")[1]
            cells.append(SegmentMeasure(key, sides[index], subset, measure, tuples[measure].table(rows, classes), rows))
    bookkeeping = {
        "segments_total": len(keys),
        "segments_dropped": dropped,
        "rows_without_sibling": int(np.sum(all_cols.s < 0)) if reads_sibling(opts.measures) else None,
    }
    return cells, bookkeeping


def _none_left(dropped: list[dict], min_samples: int) -> RagdiagError:
    """No segment reached the minimum: name the largest one and the minimum that would keep it."""
    largest = max(dropped, key=lambda d: d["rows"])
    return RagdiagError(
        f"no segment has at least {min_samples} rows (all {len(dropped)} dropped); the largest, "
        f"{largest['segment']}, has {largest['rows']}: --min-samples {largest['rows']} would keep it, "
        "or --segments pooled puts all rows of an embedder and subset together")


def _maxima(cell: SegmentMeasure, counts: np.ndarray, kinds: tuple[str, ...], alphas: np.ndarray):
    curves = correlation_curves(cell.data.values, counts, cell.data.grades, kinds, cell.data.groups,
                                cell.data.grade_moments())
    grid = alphas if CORRELATE[cell.measure].over_alpha else None
    return {kind: maximum(curve, grid) for kind, curve in curves.items()}


def _bootstrap(cells: list[SegmentMeasure], table: GradedTable, opts: CorrelateOptions, alphas: np.ndarray,
               progress) -> None:
    """95% percentile intervals: resample query ids with replacement, redo the max over α."""
    rng = np.random.default_rng(opts.seed)
    n_queries = len(table.query_names)
    multiplicity = np.stack([np.bincount(rng.integers(0, n_queries, n_queries), minlength=n_queries)
                             for _ in range(opts.bootstrap)]).astype(np.float64)
    for cell in progress(cells, "bootstrap"):
        row_queries = table.query[cell.rows]
        draws = {kind: np.full(opts.bootstrap, np.nan) for kind in opts.kinds}
        d, m = cell.data.counts.shape
        chunk = max(1, int(_BOOTSTRAP_CELLS // (len(cell.data.groups.distinct) * d * m)))
        for start in range(0, opts.bootstrap, chunk):
            weights = multiplicity[start : start + chunk][:, row_queries]
            counts = cell.data.weighted_counts(weights)
            curves = correlation_curves(cell.data.values, counts, cell.data.grades, opts.kinds, cell.data.groups,
                                        cell.data.grade_moments(weights))
            for kind, curve in curves.items():
                defined = ~np.all(np.isnan(curve), axis=1)
                draws[kind][start : start + len(curve)][defined] = np.nanmax(curve[defined], axis=1)
        cell.boot = draws


def percentile_interval(draws: np.ndarray) -> list[float] | None:
    """The 95% percentile interval (2.5th, 97.5th) of the finite bootstrap draws; None when there are none."""
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return [float(low), float(high)]


def _result_rows(cells: list[SegmentMeasure], kinds: tuple[str, ...]) -> list[dict]:
    rows = []
    for cell in cells:
        row = {"segment": cell.segment, "measure": cell.measure, "n": cell.data.rows, "side": cell.side}
        for kind in kinds:
            entry = cell.maxima[kind].to_json()
            if cell.boot:
                entry["ci"] = percentile_interval(cell.boot[kind])
            row[kind] = entry
        rows.append(row)
    return rows


def _comparisons(cells: list[SegmentMeasure], pair: tuple[str, str], kinds: tuple[str, ...]) -> list[dict]:
    """Paired difference max(first) − max(second) per segment, with its bootstrap interval."""
    by_key = {(c.segment, c.measure): c for c in cells}
    out = []
    for segment in dict.fromkeys(c.segment for c in cells):
        first, second = by_key.get((segment, pair[0])), by_key.get((segment, pair[1]))
        if first is None or second is None:
            continue
        row: dict[str, object] = {"segment": segment, "measures": list(pair), "n": [first.data.rows, second.data.rows]}
        for kind in kinds:
            a, b = first.maxima[kind].value, second.maxima[kind].value
            entry = {"difference": None if a is None or b is None else a - b}
            if first.boot:
                diff = first.boot[kind] - second.boot[kind]
                entry["ci"] = percentile_interval(diff)
                finite = diff[np.isfinite(diff)]
                entry["share_positive"] = float(np.mean(finite > 0)) if finite.size else None
            row[kind] = entry
        out.append(row)
    return out


def _verdicts(cells: list[SegmentMeasure], kind: str) -> list[dict]:
    """Per subset and side: the measure with the highest mean max-correlation over the segments
    where every measure has a value (so all are compared on the same segments), its lead over the
    runner-up, and the share of bootstrap replicates in which that lead holds."""
    groups: dict[tuple[str, str], dict[str, dict[str, SegmentMeasure]]] = {}
    for cell in cells:
        if cell.maxima[kind].value is not None:
            groups.setdefault((cell.subset, cell.side), {}).setdefault(cell.segment, {})[cell.measure] = cell
    out = []
    for (subset, side), by_segment in sorted(groups.items()):
        measures = sorted({m for seg in by_segment.values() for m in seg})
        common = [seg for seg in by_segment.values() if len(seg) == len(measures)]
        if not common:
            continue
        means = {m: float(np.mean([seg[m].maxima[kind].value for seg in common])) for m in measures}
        ranked = sorted(measures, key=lambda m: -means[m])
        best = ranked[0]
        entry = {"subset": subset, "side": side, "kind": kind, "best": best, "best_mean": means[best],
                 "segments": len(common), "runner_up": None, "runner_up_mean": None, "lead": None, "lead_holds": None,
                 "tied": [m for m in ranked if means[best] - means[m] < TIE_TOLERANCE]}
        if len(ranked) > 1:
            runner = ranked[1]
            entry.update(runner_up=runner, runner_up_mean=means[runner], lead=means[best] - means[runner])
            if common[0][best].boot:
                boot = {m: np.nanmean(np.stack([seg[m].boot[kind] for seg in common]), axis=0) for m in (best, runner)}
                diff = boot[best] - boot[runner]
                finite = diff[np.isfinite(diff)]
                entry["lead_holds"] = float(np.mean(finite > 0)) if finite.size else None
        out.append(entry)
    return out


def _no_progress(items, _label):
    return items


def run_correlate(table: GradedTable, opts: CorrelateOptions, progress=_no_progress) -> dict:
    """The full analysis as plain data: results, comparisons, verdicts (JSON-ready)."""
    if len(table) == 0:
        raise RagdiagError(f"{table.source.name}: no graded rows to correlate")
    if opts.compare and any(m not in opts.measures for m in opts.compare):
        raise RagdiagError(f"--compare {','.join(opts.compare)}: both measures must be among --measures")
    alphas = parse_alpha_grid(opts.alpha_grid)
    cells, bookkeeping = _cells(table, opts, alphas)
    if not cells and bookkeeping["segments_dropped"]:
        raise _none_left(bookkeeping["segments_dropped"], opts.min_samples)
    for cell in progress(cells, "correlating"):
        cell.maxima = _maxima(cell, cell.data.counts, opts.kinds, alphas)
    if opts.bootstrap > 0:
        _bootstrap(cells, table, opts, alphas, progress)
    output = {
        "results": _result_rows(cells, opts.kinds),
        "verdicts": _verdicts(cells, opts.kinds[0]),
        "segments_kept": len(dict.fromkeys(c.segment for c in cells)),
        "alpha_grid_size": int(len(alphas)),
        **bookkeeping,
    }
    if opts.compare:
        output["comparisons"] = _comparisons(cells, opts.compare, opts.kinds)
    if table.ratings is not None:  # repeated grades or a second judge: correct for judge noise
        correct_for_judge_noise(output, cells, table, opts.kinds, opts.bootstrap, opts.seed, progress)
    return output
