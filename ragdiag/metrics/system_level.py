"""System-level view (docs/methods.md#3-correlation-analysis, beyond the paper): one point per configuration
(E, subset, K) — Robustness-δ@K, mean recall, mean of each measure at its best α and the mean
grade — then correlations of each statistic with the mean grade across configurations.

A measure's "best α" is the α maximising its row-level Spearman correlation with the grade over
all rows pooled (the same max-over-α rule as the segment analysis).
"""

from __future__ import annotations

import warnings

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.measures.registry import CORRELATE
from ragdiag.measures.sample import recall, robustness_at_k
from ragdiag.metrics.correlation import correlation_curves, maximum
from ragdiag.metrics.measure_tables import RowColumns, defined_rows, distinct_table, evaluate, row_columns


def _best_alpha(measure: str, cols: RowColumns, grade: np.ndarray, alphas: np.ndarray,
                exact_ties: bool = True) -> float | None:
    if not CORRELATE[measure].over_alpha:
        return None
    data = distinct_table(measure, cols, grade, alphas, exact_ties)
    curve = correlation_curves(data.values, data.counts, data.grades, ("spearman",), data.groups)["spearman"]
    return maximum(curve, alphas).alpha


def _group_correlations(x: np.ndarray, y: np.ndarray) -> dict[str, float | None]:
    from scipy import stats

    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    out: dict[str, float | None] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        constant = len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0
        values = {
            "spearman": lambda: stats.spearmanr(x, y)[0],
            "pearson": lambda: stats.pearsonr(x, y)[0],
            "kendall_b": lambda: stats.kendalltau(x, y)[0],
            "kendall_c": lambda: stats.kendalltau(x, y, variant="c")[0],
        }
        for kind, compute in values.items():
            value = np.nan if constant else float(compute())
            out[kind] = None if np.isnan(value) else value
    return out


def system_level(table: GradedTable, measures: tuple[str, ...], deltas: tuple[float, ...], alphas: np.ndarray,
                 xk: float = 2.0, exact_ties: bool = True) -> dict:
    """Per-configuration statistics and their correlations with the mean grade (``exact_ties``: as
    :func:`ragdiag.metrics.measure_tables.distinct_table`)."""
    cols = row_columns(table, measures, xk)
    best = {}
    for measure in measures:
        rows = defined_rows(measure, cols)
        best[measure] = _best_alpha(measure, cols.rows(rows), table.grade[rows], alphas, exact_ties) if rows.any() else None
    value_of = {}
    for measure in measures:
        a = np.array([best[measure] if best[measure] is not None else 0.0])
        value_of[measure] = np.where(defined_rows(measure, cols), evaluate(measure, cols, a)[0], np.nan)
    configs, group = np.unique(np.stack([table.embedder, table.subset, table.K], axis=1), axis=0, return_inverse=True)
    group = group.ravel()
    row_recall = recall(table.n.astype(np.float64), table.Np.astype(np.float64))
    points = []
    for g, (emb, sub, k) in enumerate(configs):
        rows = group == g
        point = {"E": table.embedder_names[emb], "subset": table.subset_names[sub], "K": int(k), "n": int(rows.sum()),
                 "mean_grade": float(table.grade[rows].mean()), "recall_mean": float(row_recall[rows].mean()),
                 "robustness": {f"{d:g}": robustness_at_k(row_recall[rows], d) for d in deltas}}
        for measure in measures:
            vals = value_of[measure][rows]
            vals = vals[np.isfinite(vals)]
            point[f"{measure}_mean"] = float(vals.mean()) if vals.size else None
        points.append(point)
    grade = np.array([p["mean_grade"] for p in points])
    statistics = {f"robustness@{d:g}": [p["robustness"][f"{d:g}"] for p in points] for d in deltas}
    statistics["recall_mean"] = [p["recall_mean"] for p in points]
    for measure in measures:
        statistics[f"{measure}_mean"] = [p[f"{measure}_mean"] for p in points]
    correlations = [
        {"statistic": name, **_group_correlations(np.array([np.nan if v is None else v for v in vals], float), grade)}
        for name, vals in statistics.items()
    ]
    return {"groups": points, "best_alpha": best, "correlations": correlations, "deltas": list(deltas)}
