"""Correlations corrected for judge noise, with a joint bootstrap over queries and repeats.

When the graded rows carry repeated grades (``grade --repeats N``, N ≥ 2) or a second judge's, each
(segment, measure) maximum r gets Spearman's correction r / √rel (:mod:`judge_reliability`), rel the
reliability of the grade on that cell's rows.

The joint bootstrap (two-stage: Davison & Hinkley 1997, §3.8) draws query ids with replacement and,
inside every drawn row, its repeated grades with replacement; each replicate redoes the grade (mean
of the drawn repeats), the max over α, the reliability and the corrected value r*_b. In that
resampled world the noise-free grade of a row is its observed mean, so r*_b estimates the observed
raw maximum r; the 95% interval is the basic bootstrap interval [r* − (q₉₇.₅ − r), r* − (q₂.₅ − r)]
of the differences r*_b − r, capped to [−1, 1]. The verdict's lead is re-checked on the corrected
values of every replicate: it survives judge noise when it holds in at least 95% of them. With a
second judge instead of repeats, the judges' grades travel with their row (query resampling only)
and the interval is the percentile interval of r*_b.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ragdiag.data.graded_ratings import ratings_note
from ragdiag.metrics.correlation import TiedGroups, correlation_curves
from ragdiag.metrics.judge_reliability import (
    corrected,
    grade_reliability,
    reliability_summary,
)
from ragdiag.metrics.measure_tables import grade_classes, grades_rounded

SURVIVAL_SHARE = 0.95  # the lead survives judge noise when it holds in at least this share of replicates
_CELLS_PER_BATCH = 4_000_000  # replicates × structures × tuples × grade classes per correlation batch
_RATINGS_PER_CHUNK = 2_000_000  # replicates × rows × ratings drawn at once


class Cell(Protocol):
    """What the correction needs of a (segment, measure) cell of :mod:`ragdiag.metrics.analysis`."""

    segment: str
    side: str
    subset: str
    measure: str
    rows: np.ndarray
    maxima: dict
    data: Any  # DistinctTable: values (A, d), groups, tuple_of_row


def resample_ratings(ratings: np.ndarray, rng: np.random.Generator, batch: int) -> np.ndarray:
    """(batch, rows, R): for every row, its c present ratings drawn c times with replacement (sorted,
    NaN after them, so equal multisets give bit-equal means). The draws index each row's ratings in
    sorted order, so the result does not depend on the order of the repeats within a row (which
    repeat came back first is arbitrary)."""
    count = (~np.isnan(ratings)).sum(axis=1)
    packed = np.sort(ratings, axis=1)  # ascending, NaN last
    width = ratings.shape[1]
    pick = np.floor(rng.random((batch, *ratings.shape)) * np.maximum(count, 1)[None, :, None]).astype(np.int64)
    drawn = np.take_along_axis(np.broadcast_to(packed, (batch, *ratings.shape)), pick, axis=2)
    drawn = np.where(np.arange(width)[None, None, :] < count[None, :, None], drawn, np.nan)
    return np.sort(drawn, axis=2)


def replicate_maxima(values: np.ndarray, groups: TiedGroups, tuple_of_row: np.ndarray, grades: np.ndarray,
                     weights: np.ndarray, kinds: tuple[str, ...], rounded: bool = False) -> dict[str, np.ndarray]:
    """Max over α of each correlation kind in each replicate: ``grades`` and ``weights`` are (B, rows);
    ``rounded``: grades rounded to 0.01 as the segment's observed ones (:func:`grade_classes`)."""
    classes, class_of = grade_classes(grades, rounded)
    class_of = class_of.reshape(grades.shape)
    batch, d, m = grades.shape[0], values.shape[1], len(classes)
    out = {kind: np.full(batch, np.nan) for kind in kinds}
    step = max(1, int(_CELLS_PER_BATCH // (len(groups.distinct) * d * m)))
    for start in range(0, batch, step):
        stop = min(batch, start + step)
        cells = (np.arange(stop - start)[:, None] * (d * m) + tuple_of_row[None] * m + class_of[start:stop])
        table = np.bincount(cells.ravel(), weights=weights[start:stop].ravel(),
                            minlength=(stop - start) * d * m).reshape(stop - start, d, m)
        curves = correlation_curves(values, table, classes, kinds, groups)
        for kind, curve in curves.items():
            defined = ~np.all(np.isnan(curve), axis=1)
            out[kind][start:stop][defined] = np.nanmax(curve[defined], axis=1)
    return out


def corrected_interval(estimate: float | None, draws: np.ndarray, world_value: float | None) -> list[float] | None:
    """95% interval of the corrected correlation: basic bootstrap around ``estimate`` when the
    replicates' own target is ``world_value`` (joint resampling of repeats), else percentile."""
    finite = draws[np.isfinite(draws)]
    if finite.size == 0 or estimate is None:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    if world_value is not None:
        low, high = estimate - (high - world_value), estimate - (low - world_value)
    return [float(np.clip(low, -1, 1)), float(np.clip(high, -1, 1))]


def _value(x: float | np.ndarray) -> float | None:
    return float(x) if np.isfinite(x) else None


def joint_bootstrap(cells: Sequence[Cell], query: np.ndarray, n_queries: int, ratings: np.ndarray, grade: np.ndarray,
                    source: str, kinds: tuple[str, ...], replicates: int, seed: int,
                    progress: Callable = lambda items, _label: items) -> dict[int, dict[str, np.ndarray]]:
    """Per cell index and kind, the (B,) corrected replicate maxima; repeats are resampled inside rows
    when ``source`` is "repeats", judges' grades travel with their row otherwise."""
    query_rng, rng = np.random.default_rng(seed), np.random.default_rng([seed, 20])
    multiplicity = np.stack([np.bincount(query_rng.integers(0, n_queries, n_queries), minlength=n_queries)
                             for _ in range(replicates)]).astype(np.float64)  # the same draws as --bootstrap
    draws = {i: {kind: np.full(replicates, np.nan) for kind in kinds} for i in range(len(cells))}
    chunk = max(1, _RATINGS_PER_CHUNK // max(1, ratings.size))
    rounded = [grades_rounded(grade[cell.rows]) for cell in cells]
    for start in progress(range(0, replicates, chunk), "joint bootstrap"):
        stop = min(replicates, start + chunk)
        weights = multiplicity[start:stop][:, query]
        if source == "repeats":
            drawn = resample_ratings(ratings, rng, stop - start)
            grades = np.nanmean(drawn, axis=2)
        else:
            drawn = np.broadcast_to(ratings, (stop - start, *ratings.shape))
            grades = np.broadcast_to(grade, (stop - start, len(grade)))
        for index, cell in enumerate(cells):
            rows = cell.rows
            maxima = replicate_maxima(cell.data.values, cell.data.groups, cell.data.tuple_of_row, grades[:, rows],
                                      weights[:, rows], kinds, rounded[index])
            reliability = grade_reliability(drawn[:, rows], source, weights[:, rows])
            for kind in kinds:
                draws[index][kind][start:stop] = corrected(maxima[kind], reliability)
    return draws


def _lead_holds(cells: Sequence[Cell], draws: dict, verdict: dict) -> float | None:
    """Share of replicates where the verdict's best measure keeps its lead over the runner-up on the
    corrected values, averaged over the segments where every measure is defined (as the verdict)."""
    kind = verdict["kind"]
    by_segment: dict[str, dict[str, int]] = {}
    for index, cell in enumerate(cells):
        if (cell.subset, cell.side) == (verdict["subset"], verdict["side"]) and cell.maxima[kind].value is not None:
            by_segment.setdefault(cell.segment, {})[cell.measure] = index
    measures = {m for seg in by_segment.values() for m in seg}
    common = [seg for seg in by_segment.values() if len(seg) == len(measures)]
    if not common or verdict.get("runner_up") is None:
        return None
    mean = {m: np.nanmean(np.stack([draws[seg[m]][kind] for seg in common]), axis=0)
            for m in (verdict["best"], verdict["runner_up"])}
    diff = mean[verdict["best"]] - mean[verdict["runner_up"]]
    finite = diff[np.isfinite(diff)]
    return float(np.mean(finite > 0)) if finite.size else None


def correct_for_judge_noise(output: dict, cells: Sequence[Cell], table: Any, kinds: tuple[str, ...], replicates: int,
                            seed: int, progress: Callable = lambda items, _label: items) -> None:
    """Add ``corrected`` (value, reliability, ci) to every result entry, ``lead_holds_joint`` and
    ``survives_judge_noise`` to every verdict, and the overall ``judge_reliability``; in place.
    ``table`` is the GradedTable (``ratings`` not None)."""
    ratings, source = table.ratings, table.ratings_source
    note = ratings_note(ratings, lambda i: f"id '{table.query_names[table.query[i]]}', "
                                           f"E '{table.embedder_names[table.embedder[i]]}', K {table.K[i]}")
    empty = np.all(np.isnan(ratings), axis=1)
    if source == "repeats" and empty.any():  # a graded row without its repeats list: its grade is its one rating
        ratings = ratings.copy()
        ratings[empty, 0] = table.grade[empty]
    output["judge_reliability"] = {**reliability_summary(ratings, source), "joint_bootstrap": replicates,
                                   "survival_share": SURVIVAL_SHARE, **({"ratings_note": note} if note else {})}
    draws = joint_bootstrap(cells, table.query, len(table.query_names), ratings, table.grade, source, kinds,
                            replicates, seed, progress) if replicates else {}
    for index, (cell, row) in enumerate(zip(cells, output["results"], strict=True)):
        reliability = float(grade_reliability(ratings[cell.rows], source))
        for kind in kinds:
            value = cell.maxima[kind].value
            entry: dict[str, Any] = {"value": None if value is None else _value(corrected(value, reliability)),
                     "reliability": _value(reliability)}
            if draws:
                entry["ci"] = corrected_interval(entry["value"], draws[index][kind],
                                                 value if source == "repeats" else None)
            row[kind]["corrected"] = entry
    for verdict in output["verdicts"]:
        holds = _lead_holds(cells, draws, verdict) if draws else None
        verdict["lead_holds_joint"] = holds
        verdict["survives_judge_noise"] = None if holds is None else holds >= SURVIVAL_SHARE
