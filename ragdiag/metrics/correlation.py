"""Correlation curves over an α grid, computed on distinct measure values (docs/methods.md#3-correlation-analysis).

A measure depends on a few small integers per sample, so a segment has only d distinct tuples.
The data reduce to a count table C (d tuples × m grade classes); for each α the d values are
sorted once and tied values (bit-equal floats, the paper's semantics) merged into groups. From
C and the groups:

- Spearman = weighted Pearson of mid-ranks (mid-rank of a group = rows below + (w + 1)/2);
- Pearson  = weighted Pearson of the values;
- Kendall τ-b = S / √((n0 − n1)(n0 − n2)), τ-c = 2S / (N² (m_c − 1)/m_c), with S = concordant −
  discordant pairs from the group × grade table, n0 = N(N−1)/2, n1/n2 the tied pairs in x/y and
  m_c = min(distinct x, distinct y) — scipy.stats.kendalltau's definitions.

All of this is vectorised over the α axis. NaN marks an undefined correlation (constant input).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

KINDS = ("spearman", "pearson", "kendall_b", "kendall_c")


def round_significant(values: np.ndarray, digits: int = 12) -> np.ndarray:
    """Values rounded to ``digits`` significant digits (turns last-bit differences into ties)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.abs(values)))
    exponent = np.where(np.isfinite(exponent), exponent, 0)
    scale = 10.0 ** (digits - 1 - exponent)
    return np.round(values * scale) / scale


@dataclass
class TiedGroups:
    """The tie/order structure of each α row: the group of every tuple (groups numbered in
    increasing value). Rank correlations depend only on this structure, so they are computed
    once per distinct structure (``distinct``, U ≤ A rows) and expanded with ``row_of``."""

    group: np.ndarray  # (A, d) int64
    distinct: np.ndarray  # (U, d) int64
    row_of: np.ndarray  # (A,) index into distinct

    @classmethod
    def of(cls, values: np.ndarray) -> TiedGroups:
        order = np.argsort(values, axis=1, kind="stable")
        ordered = np.take_along_axis(values, order, axis=1)
        starts = np.zeros(values.shape[::-1], dtype=np.int64)  # (d, A): the running count goes along axis 0
        starts[1:] = (ordered[:, 1:] != ordered[:, :-1]).T
        group_sorted = np.cumsum(starts, axis=0).T
        group = np.empty(values.shape, dtype=np.int64)
        np.put_along_axis(group, order, group_sorted, axis=1)
        return cls(group, *_distinct_rows(group))


@functools.lru_cache(maxsize=64)
def _hash_weights(width: int) -> np.ndarray:
    """The random weights hashing a row of ``width`` integers (seed 0)."""
    return np.random.default_rng(0).integers(1, 2**62, size=width, dtype=np.int64)


def _distinct_rows(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of an int matrix and the index of each row among them (hash, then verify)."""
    weights = _hash_weights(group.shape[1])
    with np.errstate(over="ignore"):
        keys = group @ weights
    _, first, row_of = np.unique(keys, return_index=True, return_inverse=True)
    distinct = group[first]
    if not np.array_equal(distinct[row_of.ravel()], group):  # a hash collision: fall back to exact
        distinct, row_of = np.unique(group, axis=0, return_inverse=True)
    return distinct, row_of.ravel()


def _group_sums(group: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Sums of per-tuple ``weights`` (B, d) or (B, d, m) within the groups of each structure row
    ``group`` (U, d) → (B, U, d) or (B, U, d, m), groups indexed 0..d−1."""
    batch, (rows, d) = weights.shape[0], group.shape
    index = np.arange(batch)[:, None, None] * (rows * d) + (np.arange(rows)[:, None] * d + group)[None]
    if weights.ndim == 2:
        tiled = np.broadcast_to(weights[:, None, :], (batch, rows, d))
        return np.bincount(index.ravel(), weights=tiled.ravel(), minlength=batch * rows * d).reshape(batch, rows, d)
    m = weights.shape[2]
    cell_index = index[..., None] * m + np.arange(m)
    tiled = np.broadcast_to(weights[:, None, :, :], (batch, rows, d, m))
    size = batch * rows * d * m
    return np.bincount(cell_index.ravel(), weights=tiled.ravel(), minlength=size).reshape(batch, rows, d, m)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Pearson r of x (B, U, d) against y (B, m) with cell weights table (B, d, m), per row → (B, U)."""
    w_x, w_y = table.sum(axis=2), table.sum(axis=1)
    total = w_x.sum(axis=1)
    xc = x - (np.einsum("bud,bd->bu", x, w_x) / total[:, None])[:, :, None]
    yc = y - ((w_y * y).sum(axis=1) / total)[:, None]
    cov = np.einsum("bud,bd->bu", xc, np.einsum("bdm,bm->bd", table, yc))
    var_x = np.einsum("bud,bd->bu", xc * xc, w_x)
    var_y = (yc * yc * w_y).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(var_x * var_y[:, None])
    return np.clip(r, -1.0, 1.0)


def _moment_pearson(x: np.ndarray, w_x: np.ndarray, grade_sums: np.ndarray, grade_squares: np.ndarray) -> np.ndarray:
    """Pearson r of x (B, U, d) against row grades given by their moments: per tuple the (weighted)
    sum of the grades ``grade_sums`` (B, d), overall the sum of squares ``grade_squares`` (B,).
    cov = Σ_d (x_d − x̄)·Y_d, var_y = Σ y² − N·ȳ² (the grades as given, not their classes)."""
    total = w_x.sum(axis=1)
    xc = x - (np.einsum("bud,bd->bu", x, w_x) / total[:, None])[:, :, None]
    cov = np.einsum("bud,bd->bu", xc, grade_sums)
    var_x = np.einsum("bud,bd->bu", xc * xc, w_x)
    var_y = np.maximum(grade_squares - grade_sums.sum(axis=1) ** 2 / total, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(var_x * var_y[:, None])
    return np.clip(r, -1.0, 1.0)


def _mid_ranks(weights: np.ndarray) -> np.ndarray:
    """Mid-ranks (1-based) of consecutive groups with the given weights, along the last axis."""
    upto = np.cumsum(weights, axis=-1)
    return upto - weights / 2.0 + 0.5


def correlation_curves(values: np.ndarray, table: np.ndarray, grades: np.ndarray, kinds: tuple[str, ...],
                       groups: TiedGroups | None = None,
                       moments: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Correlation of the measure with the grade at every α, for each kind.

    values: (A, d) measure value of each distinct tuple at each α.
    table:  (d, m) row counts of each tuple × grade class, or (B, d, m) for B weightings at once
            (bootstrap replicates).
    grades: (m,) the grade value of each class, increasing.
    moments: Pearson from the grades as given when the classes are rounded (see
            :meth:`ragdiag.metrics.measure_tables.DistinctTable.grade_moments`): per tuple the sum
            of the grades (d,) / (B, d) and the sum of their squares () / (B,).
    Returns {kind: (A,) array} — (B, A) for a batch of tables — NaN where undefined.
    """
    single = table.ndim == 2
    tables = table[None] if single else table
    groups = groups or TiedGroups.of(values)
    batch = tables.shape[0]
    w_x, w_y = tables.sum(axis=2), tables.sum(axis=1)
    total = w_x.sum(axis=1)
    grade_rows = np.broadcast_to(grades, (batch, len(grades)))
    group_w = _group_sums(groups.distinct, w_x)
    x_classes = (group_w > 0).sum(axis=2)
    y_classes = (w_y > 0).sum(axis=1)
    undefined = (x_classes < 2) | (y_classes < 2)[:, None] | (total < 2)[:, None]
    out: dict[str, np.ndarray] = {}
    if "spearman" in kinds:
        rank_x = np.take_along_axis(_mid_ranks(group_w), np.broadcast_to(groups.distinct, group_w.shape), axis=2)
        out["spearman"] = _weighted_pearson(rank_x, _mid_ranks(w_y), tables)
    if "kendall_b" in kinds or "kendall_c" in kinds:
        s = _kendall_s(_group_sums(groups.distinct, tables))
        pairs = (total * (total - 1) / 2)[:, None]
        x_ties = (group_w * (group_w - 1) / 2).sum(axis=2)
        y_ties = (w_y * (w_y - 1) / 2).sum(axis=1)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            if "kendall_b" in kinds:
                out["kendall_b"] = np.clip(s / np.sqrt(pairs - x_ties) / np.sqrt(pairs - y_ties), -1, 1)
            if "kendall_c" in kinds:
                classes = np.minimum(x_classes, y_classes[:, None]).astype(np.float64)
                out["kendall_c"] = np.clip(2 * s / (total[:, None] ** 2 * (classes - 1) / classes), -1, 1)
    for kind in out:
        out[kind] = np.where(undefined, np.nan, out[kind])[:, groups.row_of]
    if "pearson" in kinds:
        x = np.broadcast_to(values, (batch, *values.shape))
        if moments is None:
            pearson = _weighted_pearson(x, grade_rows, tables)
        else:
            sums, squares = (np.reshape(moments[0], (batch, -1)), np.reshape(moments[1], (batch,)))
            pearson = _moment_pearson(x, w_x, sums, squares)
        out["pearson"] = np.where(undefined[:, groups.row_of], np.nan, pearson)
    return {kind: out[kind][0] if single else out[kind] for kind in kinds}


def _kendall_s(cells: np.ndarray) -> np.ndarray:
    """S = concordant − discordant pairs from (B, U, groups, m) counts (groups and classes increasing)."""
    above = np.cumsum(cells[:, :, ::-1, :], axis=2)[:, :, ::-1, :] - cells  # rows in strictly higher groups
    cum = np.cumsum(above, axis=3)
    higher_y = cum[..., -1:] - cum  # Σ_{j' > j}
    lower_y = cum - above  # Σ_{j' < j}
    return (cells * (higher_y - lower_y)).sum(axis=(2, 3))


@dataclass
class Maximum:
    """The maximum of a correlation curve and the first α reaching it (None when all NaN)."""

    value: float | None
    alpha: float | None

    def to_json(self) -> dict[str, float | None]:
        return {"value": self.value, "alpha": self.alpha}


MAX_TOLERANCE = 1e-12


def maximum(curve: np.ndarray, alphas: np.ndarray | None) -> Maximum:
    """Max over α ignoring NaN, at the first α reaching it scanning α upward.

    "Reaching" allows 1e-12: where the correlation is flat in α (e.g. Pearson of T within one K,
    an affine function of n for every α) the float noise of the last bits would otherwise pick
    an arbitrary α on the plateau; the first α of the plateau is reported, with its value.
    """
    defined = curve[~np.isnan(curve)]
    if defined.size == 0:
        return Maximum(None, None)
    top = defined.max()
    best = int(np.argmax(curve >= top - MAX_TOLERANCE))  # NaN compares false
    return Maximum(float(curve[best]), None if alphas is None else float(alphas[best]))
