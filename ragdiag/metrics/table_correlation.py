"""Correlate any per-query metric columns with an answer grade (``ragdiag correlate --table``).

Per group (or all rows): Spearman, Pearson, Kendall τ-b and τ-c of each metric with the grade, as
scipy.stats defines them (NaN → null when a column is constant). With ``bootstrap`` B > 0: B
resamples of the rows — or of the ids, keeping all rows of an id together (cluster bootstrap) —
drawn once and shared by every metric, so differences are paired; 95% percentile intervals, the
paired difference of two metrics (``compare``) and the share of resamples in which the verdict's
lead holds. The result has the shape of ``ragdiag correlate``'s (results, verdicts, comparisons).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ragdiag.data.metric_table import MetricTable
from ragdiag.errors import RagdiagError
from ragdiag.metrics.analysis import TIE_TOLERANCE, percentile_interval
from ragdiag.metrics.correlation import KINDS
from ragdiag.results.correlate import CorrelateResult


@dataclass
class TableOptions:
    kinds: tuple[str, ...] = KINDS
    min_samples: int = 10
    bootstrap: int = 0
    seed: int = 0
    compare: tuple[str, str] | None = None


def _corr_rows(kind: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Correlation of x[b] with y[b] for every row b of (B, n) arrays; NaN where undefined."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("spearman", "pearson"):
            if kind == "spearman":
                x, y = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
            xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                r = (xc * yc).sum(axis=1) / np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
            constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
            return np.where(constant, np.nan, np.clip(r, -1, 1))
        variant = kind.split("_")[1]
        return np.array([stats.kendalltau(a, b, variant=variant).statistic for a, b in zip(x, y)], dtype=np.float64)


def _boot_corr(kind: str, x: np.ndarray, y: np.ndarray, resampled: list[np.ndarray]) -> np.ndarray:
    """The correlation in every resample: batched when all resamples have one size (rows),
    one by one otherwise (ids with different numbers of rows)."""
    if len({len(r) for r in resampled}) == 1:
        idx = np.stack(resampled)
        return _corr_rows(kind, x[idx], y[idx])
    return np.concatenate([_corr_rows(kind, x[r][None], y[r][None]) for r in resampled])


def _value(kind: str, x: np.ndarray, y: np.ndarray) -> float | None:
    """One correlation through scipy.stats (the reference definitions)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "spearman":
            r = stats.spearmanr(x, y).statistic
        elif kind == "pearson":
            r = stats.pearsonr(x, y).statistic if len(x) > 1 else np.nan
        else:
            r = stats.kendalltau(x, y, variant=kind.split("_")[1]).statistic
    return None if r is None or not np.isfinite(r) else float(r)


def _natural(name: str) -> tuple:
    """Numeric group names in numeric order (2 before 10), others after, alphabetically."""
    try:
        return (0, float(name), "")
    except ValueError:
        return (1, 0.0, name)


def _resamples(rows: np.ndarray, ids: np.ndarray | None, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of each resample: rows drawn with replacement, or whole ids drawn with replacement."""
    if ids is None:
        return [rows[rng.integers(0, len(rows), len(rows))] for _ in range(count)]
    unique, inverse = np.unique(ids[rows], return_inverse=True)
    members = [rows[inverse == u] for u in range(len(unique))]
    return [np.concatenate([members[i] for i in rng.integers(0, len(unique), len(unique))]) for _ in range(count)]


def correlate_table(table: MetricTable, opts: TableOptions) -> dict:
    """Results per (group, metric), paired comparisons and a verdict per group, JSON-ready."""
    if opts.compare and any(m not in table.measures for m in opts.compare):
        raise RagdiagError(f"compare {','.join(opts.compare)}: both must be among the metric columns "
                           f"({', '.join(table.measures)})")
    rng = np.random.default_rng(opts.seed)
    groups = sorted(set(table.group.tolist()), key=_natural)
    dropped, results, comparisons, verdicts = [], [], [], []
    for group in groups:
        rows = np.flatnonzero(table.group == group)
        if len(rows) < opts.min_samples:
            dropped.append({"segment": group, "rows": int(len(rows))})
            continue
        resampled = _resamples(rows, table.ids, opts.bootstrap, rng) if opts.bootstrap else []
        boot: dict[tuple[str, str], np.ndarray] = {}
        for measure, column in table.measures.items():
            row = {"segment": group, "measure": measure, "n": int(len(rows)), "side": "all"}
            for kind in opts.kinds:
                entry: dict[str, Any] = {"value": _value(kind, column[rows], table.grade[rows]), "alpha": None}
                if resampled:
                    boot[measure, kind] = _boot_corr(kind, column, table.grade, resampled)
                    entry["ci"] = percentile_interval(boot[measure, kind])
                row[kind] = entry
            results.append(row)
        group_rows = [r for r in results if r["segment"] == group]
        if opts.compare:
            comparisons.append(_comparison(group, group_rows, opts, boot))
        verdict = _verdict(group, group_rows, opts, boot)
        if verdict:
            verdicts.append(verdict)
    if not results and dropped:
        largest = max(dropped, key=lambda d: d["rows"])
        raise RagdiagError(f"no group has at least {opts.min_samples} rows (all {len(dropped)} dropped); the largest, "
                           f"{largest['segment']}, has {largest['rows']}: --min-samples {largest['rows']} would keep it")
    out = {"results": results, "verdicts": verdicts, "segments_kept": len(groups) - len(dropped),
           "segments_total": len(groups), "segments_dropped": dropped}
    if opts.compare:
        out["comparisons"] = comparisons
    return out


def _comparison(group: str, rows: list[dict], opts: TableOptions, boot: dict) -> dict:
    if opts.compare is None:  # called only with --compare
        raise ValueError("_comparison needs opts.compare")
    first, second = opts.compare
    by = {r["measure"]: r for r in rows}
    out: dict[str, Any] = {"segment": group, "measures": [first, second], "n": [by[first]["n"], by[second]["n"]]}
    for kind in opts.kinds:
        a, b = by[first][kind]["value"], by[second][kind]["value"]
        entry: dict[str, Any] = {"difference": None if a is None or b is None else a - b}
        if boot:
            diff = boot[first, kind] - boot[second, kind]
            entry["ci"] = percentile_interval(diff)
            finite = diff[np.isfinite(diff)]
            entry["share_positive"] = float(np.mean(finite > 0)) if finite.size else None
        out[kind] = entry
    return out


def _verdict(group: str, rows: list[dict], opts: TableOptions, boot: dict) -> dict | None:
    """The metric with the highest correlation (first kind), its lead and how often the lead holds."""
    kind = opts.kinds[0]
    defined = {r["measure"]: r[kind]["value"] for r in rows if r[kind]["value"] is not None}
    if not defined:
        return None
    ranked = sorted(defined, key=lambda m: -defined[m])
    best = ranked[0]
    entry = {"subset": group, "side": "all", "kind": kind, "best": best, "best_mean": defined[best], "segments": 1,
             "runner_up": None, "runner_up_mean": None, "lead": None, "lead_holds": None,
             "tied": [m for m in ranked if defined[best] - defined[m] < TIE_TOLERANCE]}
    if len(ranked) > 1:
        runner = ranked[1]
        entry.update(runner_up=runner, runner_up_mean=defined[runner], lead=defined[best] - defined[runner])
        if boot:
            diff = boot[best, kind] - boot[runner, kind]
            finite = diff[np.isfinite(diff)]
            entry["lead_holds"] = float(np.mean(finite > 0)) if finite.size else None
    return entry


def table_report(table: MetricTable, opts: TableOptions, grade_col: str, group_col: str | None,
                 id_col: str | None) -> CorrelateResult:
    """The analysis with a ``meta`` block in the layout of ``ragdiag correlate``'s, as its result type
    (the command stamps the run record)."""
    analysis = correlate_table(table, opts)
    meta = {
        "command": "correlate", "source": table.source, "source_sha256": table.sha256,
        "simulated_grades": table.simulated_grades,
        "grades": f"column '{grade_col}' as given in the source", "rows": len(table),
        "skipped_missing_grade": table.skipped, "segments": f"by {group_col}" if group_col else "all rows",
        "min_samples": opts.min_samples, "measures": list(table.measures), "kinds": list(opts.kinds),
        "alpha_grid": None, "bootstrap": opts.bootstrap, "seed": opts.seed,
        "bootstrap_unit": f"ids ('{id_col}')" if id_col else "rows",
        "compare": list(opts.compare) if opts.compare else None,
        "table": {"grade_col": grade_col, "group_col": group_col, "id_col": id_col},
    }
    return CorrelateResult.from_json({"meta": meta, **analysis})
