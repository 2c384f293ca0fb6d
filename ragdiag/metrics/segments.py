"""Segments of graded rows (docs/methods.md#3-correlation-analysis) and the x·K sibling used by the E measure.

- ``ratio``: key ``E^subset^KtoN^r`` with r = round(K/Np, 1) (Python's round);
- ``nw``: key ``E^subset^1`` when Np ≤ K ("wide"), else ``E^subset^0`` ("narrow");
- ``pooled``: key ``E^subset``, all rows of one embedder and subset together (side "pooled"),
  for evaluation sets too small to split.
"""

from __future__ import annotations

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.errors import RagdiagError

SEGMENTATIONS = ("ratio", "nw", "pooled")


def segment_rows(table: GradedTable, mode: str) -> tuple[np.ndarray, list[str], list[str]]:
    """Per-row segment code, the segment keys (sorted by embedder, subset, then numerically), and
    each segment's side: "narrow" or "wide" (for ratio segments: r < 1 or r ≥ 1)."""
    if mode not in SEGMENTATIONS:
        raise RagdiagError(f"unknown --segments '{mode}': choose ratio, nw or pooled")
    if mode == "ratio":
        pairs, inverse = np.unique(np.stack([table.K, table.Np], axis=1), axis=0, return_inverse=True)
        ratio_of_pair = np.array([round(int(k) / int(np_), 1) for k, np_ in pairs])
        tail = ratio_of_pair[inverse.ravel()]
    elif mode == "nw":
        tail = (table.Np <= table.K).astype(np.float64)
    else:
        tail = np.zeros(len(table), dtype=np.float64)
    combos, seg = np.unique(
        np.stack([table.embedder.astype(np.float64), table.subset.astype(np.float64), tail], axis=1),
        axis=0, return_inverse=True,
    )
    keys, sides = [], []
    for emb, sub, value in combos:
        prefix = f"{table.embedder_names[int(emb)]}^{table.subset_names[int(sub)]}"
        if mode == "ratio":
            keys.append(f"{prefix}^KtoN^{float(value)!r}")
            sides.append("wide" if value >= 1 else "narrow")
        elif mode == "pooled":
            keys.append(prefix)
            sides.append("pooled")
        else:
            keys.append(f"{prefix}^{int(value)}")
            sides.append("wide" if value == 1 else "narrow")
    return seg.ravel().astype(np.int64), keys, sides


def sibling_positives(table: GradedTable, xk: float) -> np.ndarray:
    """S per row: positives in the top round(x·K) of the same ranking, i.e. ``n`` of the graded row
    with the same (id, E, Nc, Np) and K' = round(x·K); −1 where that sibling is absent."""
    ranking = np.unique(np.stack([table.query, table.embedder, table.Nc, table.Np], axis=1), axis=0,
                        return_inverse=True)[1].ravel().astype(np.int64)
    k_target = np.round(xk * table.K).astype(np.int64)
    span = int(max(table.K.max(initial=0), k_target.max(initial=0))) + 1
    have = ranking * span + table.K
    want = ranking * span + k_target
    order = np.argsort(have, kind="stable")
    pos = np.searchsorted(have[order], want)
    pos = np.minimum(pos, len(have) - 1)
    found = have[order][pos] == want if len(have) else np.zeros(0, dtype=bool)
    return np.where(found, table.n[order][pos], -1)
