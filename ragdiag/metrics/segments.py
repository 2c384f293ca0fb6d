"""Segments of graded rows (docs/methods.md#3-correlation-analysis) and the x·K sibling used by the E measure.

- ``ratio``: key ``E^subset^KtoN^r`` with r = round(K/Np, 1) (Python's round);
- ``nw``: key ``E^subset^1`` when Np ≤ K ("wide"), else ``E^subset^0`` ("narrow");
- ``pooled``: key ``E^subset``, all rows of one embedder and subset together (side "pooled"),
  for evaluation sets too small to split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from ragdiag.data.codes import DENSE_MAX, dense_codes
from ragdiag.data.graded_table import GradedTable
from ragdiag.errors import RagdiagError

SEGMENTATIONS = ("ratio", "nw", "pooled")


def segment_rows(table: GradedTable, mode: str) -> tuple[np.ndarray, list[str], list[str]]:
    """Per-row segment code, the segment keys (sorted by embedder, subset, then numerically), and
    each segment's side: "narrow" or "wide" (for ratio segments: r < 1 or r ≥ 1).

    Linear time: (K, Np) pairs and (embedder, subset, tail) triples are coded through integer keys
    (:func:`dense_codes`), in the lexicographic order ``np.unique(..., axis=0)`` gives."""
    if mode not in SEGMENTATIONS:
        raise RagdiagError(f"unknown --segments '{mode}': choose ratio, nw or pooled")
    if mode == "ratio":
        np_span = int(table.Np.max(initial=0)) + 1
        pairs, inverse = dense_codes(table.K.astype(np.int64) * np_span + table.Np)
        ratio_of_pair = np.array([round(int(k) / int(np_), 1) for k, np_ in zip(pairs // np_span, pairs % np_span)])
        tails, tail_of_pair = np.unique(ratio_of_pair, return_inverse=True)
        tail_code = tail_of_pair.ravel()[inverse]
    elif mode == "nw":
        tail_code = (table.Np <= table.K).astype(np.int64)
        tails = np.array([0.0, 1.0])
    else:
        tail_code = np.zeros(len(table), dtype=np.int64)
        tails = np.array([0.0])
    n_tail, n_sub = len(tails), max(len(table.subset_names), 1)
    combos, seg = dense_codes((table.embedder.astype(np.int64) * n_sub + table.subset) * n_tail + tail_code)
    keys, sides = [], []
    for combo in combos.tolist():
        emb, sub, value = combo // (n_sub * n_tail), (combo // n_tail) % n_sub, float(tails[combo % n_tail])
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
    return seg.astype(np.int64), keys, sides


def sibling_positives(table: GradedTable, xk: float) -> np.ndarray:
    """S per row: positives in the top round(x·K) of the same ranking, i.e. ``n`` of the graded row
    with the same (id, E, Nc, Np) and K' = round(x·K); −1 where that sibling is absent.

    Rankings and (ranking, K) cells are coded through integer keys; with a small enough key space
    the sibling is found in a lookup table (linear time), else by sorting."""
    if not len(table):
        return np.zeros(0, dtype=np.int64)
    _, by_query = dense_codes(table.query.astype(np.int64) * (len(table.embedder_names) or 1) + table.embedder)
    _, by_size = dense_codes(table.Nc.astype(np.int64) * (int(table.Np.max()) + 1) + table.Np)
    _, ranking = dense_codes(by_query * (int(by_size.max()) + 1) + by_size)
    k_target = np.round(xk * table.K).astype(np.int64)
    span = int(max(table.K.max(initial=0), k_target.max(initial=0))) + 1
    have = ranking * span + table.K
    want = ranking * span + k_target
    if (int(ranking.max()) + 1) * span <= DENSE_MAX:
        row_of = np.full((int(ranking.max()) + 1) * span, -1, dtype=np.int64)
        row_of[have] = np.arange(len(have))
        pos = row_of[want]
        return np.where(pos >= 0, table.n[np.maximum(pos, 0)], -1)
    order = np.argsort(have, kind="stable")
    pos = np.searchsorted(have[order], want)
    pos = np.minimum(pos, len(have) - 1)
    found = have[order][pos] == want
    return np.where(found, table.n[order][pos], -1)


def segment_key(embedder: str, subset: str, k: int, np_: int, mode: str) -> str:
    """The segment code :func:`segment_rows` gives a row of (embedder, subset, K, Np)."""
    prefix = f"{embedder}^{subset}"
    if mode == "ratio":
        return f"{prefix}^KtoN^{float(round(int(k) / int(np_), 1))!r}"
    if mode == "nw":
        return f"{prefix}^{int(np_ <= k)}"
    return prefix


def planned_sizes(rows: Iterable[tuple[str, str, int, int]], mode: str) -> dict[str, int]:
    """Rows per segment for planned (embedder, subset, K, Np) rows — known before any model call."""
    return dict(Counter(segment_key(e, s, k, np_, mode) for e, s, k, np_ in rows))


def segmentation_for(rows: list[tuple[str, str, int, int]], mode: str, min_samples: int) -> tuple[str, str | None]:
    """The segmentation to run with, decided before any paid call, and a one-line notice when it changed.

    ``mode`` when one of its segments reaches ``min_samples`` rows; else ``pooled`` (one segment per
    embedder and subset) when a pooled segment does; else an error naming the largest pooled
    segment and the ``--min-samples`` that would keep it.
    """
    sizes = planned_sizes(rows, mode)
    if any(n >= min_samples for n in sizes.values()):
        return mode, None
    pooled = planned_sizes(rows, "pooled")
    key, largest = max(pooled.items(), key=lambda kv: (kv[1], kv[0]), default=("(none)", 0))
    if mode != "pooled" and largest >= min_samples:
        widest = max(sizes.values(), default=0)
        return "pooled", (f"every {mode} segment would have fewer than {min_samples} rows (largest {widest}): "
                          f"using --segments pooled instead ({len(pooled)} segment(s), largest {key} with {largest})")
    raise RagdiagError(
        f"no segment would have at least {min_samples} rows (--min-samples), even with --segments pooled: the "
        f"largest, {key}, would have {largest}; --min-samples {max(largest, 1)} keeps it (checked before any model "
        "or LLM call)")
