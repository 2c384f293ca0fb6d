"""Per-query hardness features and how they explain per-query recall (paper 000 §5.4, tail causes).

Distances are Euclidean, d(q, x) = ‖q − x‖, in the space the index searches (unit vectors for
cosine, where d² = 2 − 2·cos). Base vectors at distance 0 from the query (duplicates) are skipped.

- Relative contrast (He, Kumar & Chang, ICML 2012): RC(q) = D_mean(q) / D_min(q), the mean distance
  from q to all base vectors over the distance to its nearest neighbour. RC near 1 means the
  nearest neighbour barely stands out: a hard query.
- Local intrinsic dimensionality, maximum-likelihood estimator (Levina & Bickel, NIPS 2005, in
  the form of Amsaleg et al., KDD 2015): LID(q) = −[(1/k) Σ_{i=1..k} ln(r_i / r_k)]⁻¹ with r_1 ≤ … ≤
  r_k the distances to the k nearest base vectors (``k`` = ``--lid-k``, default 20). High LID: a
  locally high-dimensional neighbourhood, where nearest neighbours are hard to separate.

Per operating point: Spearman's ρ (``scipy.stats.spearmanr``) of each feature with per-query
recall; the queries with recall 0 at some point are listed with their features.
"""

from __future__ import annotations

import warnings

import numpy as np

DEFAULT_LID_K = 20
_CHUNK = 256


def _squared_norms(x: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", x, x, dtype=np.float64)


def mean_distances(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Mean Euclidean distance from each query to all base vectors, skipping distance-0 duplicates."""
    base_sq = _squared_norms(base)
    out = np.empty(len(queries))
    for start in range(0, len(queries), _CHUNK):
        q = queries[start:start + _CHUNK].astype(np.float64)
        sq = np.maximum(_squared_norms(q)[:, None] + base_sq[None, :] - 2.0 * (q @ base.T.astype(np.float64)), 0.0)
        dist = np.sqrt(sq)
        positive = dist > 1e-6
        out[start:start + len(q)] = (dist * positive).sum(axis=1) / np.maximum(positive.sum(axis=1), 1)
    return out


def neighbour_distances(base: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """(nq, k) Euclidean distances to the k nearest base vectors at positive distance (faiss flat L2);
    NaN where fewer than k exist."""
    import faiss

    extra = min(len(base), k + 8)
    index = faiss.IndexFlatL2(base.shape[1])
    index.add(np.ascontiguousarray(base, dtype=np.float32))
    squared, _ = index.search(np.ascontiguousarray(queries, dtype=np.float32), extra)
    dist = np.sqrt(np.maximum(squared.astype(np.float64), 0.0))
    out = np.full((len(queries), k), np.nan)
    for i, row in enumerate(dist):
        kept = row[row > 1e-6][:k]
        out[i, : len(kept)] = kept
    return out


def relative_contrast(mean_d: np.ndarray, nearest_d: np.ndarray) -> np.ndarray:
    """RC = D_mean / D_min per query."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean_d / nearest_d


def lid_mle(dists: np.ndarray) -> np.ndarray:
    """LID = −1 / mean_i ln(r_i / r_k) per row of sorted neighbour distances (NaN when undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_log = np.log(dists / dists[:, -1:]).mean(axis=1)
        return np.where(mean_log < 0, -1.0 / mean_log, np.nan)  # all k at one distance: undefined


def features(base: np.ndarray, queries: np.ndarray, lid_k: int = DEFAULT_LID_K) -> dict[str, np.ndarray]:
    """{"relative_contrast": (nq,), "lid": (nq,)} for prepared vectors."""
    dists = neighbour_distances(base, queries, lid_k)
    return {"relative_contrast": relative_contrast(mean_distances(base, queries), dists[:, 0]), "lid": lid_mle(dists)}


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _spearman(feature: np.ndarray, recall: np.ndarray) -> dict:
    from scipy.stats import spearmanr

    keep = np.isfinite(feature)
    if keep.sum() < 3 or np.ptp(recall[keep]) == 0:
        return {"spearman": None, "p_value": None, "n": int(keep.sum()), "note": "recall is constant at this point"
                if keep.sum() >= 3 else "fewer than 3 queries with the feature defined"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = spearmanr(feature[keep], recall[keep])
    return {"spearman": _finite(result.statistic), "p_value": _finite(result.pvalue), "n": int(keep.sum())}


def _summary(values: np.ndarray) -> dict:
    finite = values[np.isfinite(values)]
    if not len(finite):
        return {"n": 0}
    p5, p50, p95 = np.percentile(finite, [5, 50, 95])
    return {"n": len(finite), "p5": float(p5), "median": float(p50), "p95": float(p95)}


def hardness_report(base: np.ndarray, queries: np.ndarray, recalls: list[np.ndarray], labels: list[str],
                    lid_k: int = DEFAULT_LID_K) -> dict:
    """Features per query, their Spearman ρ with recall at every point, and the zero-recall queries."""
    feats = features(base, queries, lid_k)
    names = list(feats)
    correlations = [{"point": i, "label": label, **{n: _spearman(feats[n], r) for n in names}}
                    for i, (label, r) in enumerate(zip(labels, recalls))]
    zero_points = [[labels[i] for i, r in enumerate(recalls) if r[j] == 0] for j in range(len(queries))]
    zero = [{"query": j, "points": pts, **{n: _finite(feats[n][j]) for n in names}}
            for j, pts in enumerate(zero_points) if pts]
    return {"lid_k": lid_k, "distance": "Euclidean, in the searched space (duplicates at distance 0 skipped)",
            "features": {n: _summary(feats[n]) for n in names}, "correlations": correlations,
            "zero_recall_queries": zero,
            "queries": [{"query": j, **{n: _finite(feats[n][j]) for n in names}} for j in range(len(queries))]}
