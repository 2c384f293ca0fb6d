"""Per-query recall and Robustness-δ@K (Wang et al., arXiv 2507.00379, §3; docs/methods.md#4-robustness).

R_i = |retrieved top-K ∩ true top-K| / K for ANN (true = exact k-NN), or n_i / Np_i for
labelled data (true = relevant set). Robustness-δ@K = (1/|Q|) Σ_i 1[R_i ≥ δ].
"""

from __future__ import annotations

import numpy as np

from ragdiag.measures.sample import robustness_at_k

DEFAULT_DELTAS = (0.1, 0.3, 0.5, 0.7, 0.9)
TIE_RTOL = 1e-6


def exact_ground_truth(base: np.ndarray, queries: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids) of the exact top-k by brute force (faiss flat), per query row."""
    from ragdiag.retrieval.index_specs import parse_index_spec
    from ragdiag.retrieval.indexes import build_index, search

    return search(build_index(parse_index_spec("flat"), base, metric), queries, k)


def exact_scores(base: np.ndarray, queries: np.ndarray, ids: np.ndarray, metric: str) -> np.ndarray:
    """Exact score of each returned id (inner product, or squared L2); NaN where id is -1."""
    safe = np.where(ids < 0, 0, ids)
    gathered = base[safe]  # (nq, k, dim)
    if metric == "l2":
        scores = ((gathered - queries[:, None, :]) ** 2).sum(axis=2)
    else:
        scores = np.einsum("qkd,qd->qk", gathered, queries)
    return np.where(ids < 0, np.nan, scores)


def ann_recall(
    ids: np.ndarray,
    true_ids: np.ndarray,
    *,
    tie_aware: bool = False,
    returned_scores: np.ndarray | None = None,
    true_scores: np.ndarray | None = None,
    metric: str = "ip",
) -> np.ndarray:
    """R_i per query: share of the K true neighbours among the K returned ids.

    Tie-aware (big-ann-benchmarks): a returned item also counts if its exact score is within
    ``TIE_RTOL`` (relative) of the K-th true score, so equidistant items are not penalised;
    the count is capped at K.
    """
    k = true_ids.shape[1]
    hits = (ids[:, :, None] == true_ids[:, None, :]).any(axis=2) & (ids >= 0)
    if tie_aware:
        if returned_scores is None or true_scores is None:
            raise ValueError("tie-aware recall needs returned_scores and true_scores")
        kth = true_scores[:, -1:]
        tol = TIE_RTOL * np.maximum(np.abs(kth), 1e-30)
        with np.errstate(invalid="ignore"):
            within = returned_scores <= kth + tol if metric == "l2" else returned_scores >= kth - tol
        hits = hits | (within & (ids >= 0))
    return np.minimum(hits.sum(axis=1), k) / k


def robustness(recalls: np.ndarray, deltas: tuple[float, ...] = DEFAULT_DELTAS) -> dict[str, float]:
    """Robustness-δ@K for each δ: fraction of queries whose recall is at least δ."""
    return {_delta_key(d): robustness_at_k(recalls, d) for d in deltas}


def _delta_key(delta: float) -> str:
    return f"{delta:g}"


def recall_histogram(recalls: np.ndarray, k: int) -> dict[str, list]:
    """Counts of queries per recall value; recall takes values j/k, so one bin per j = 0..k.

    Labelled recall (n/Np) is binned into k+1 equal-width bins of [0, 1].
    """
    edges = (np.arange(k + 2) - 0.5) / k
    edges[0], edges[-1] = -np.inf, np.inf
    counts, _ = np.histogram(recalls, bins=edges)
    return {"bins": [round(j / k, 6) for j in range(k + 1)], "counts": [int(c) for c in counts]}


def summarise(recalls: np.ndarray, k: int, deltas: tuple[float, ...]) -> dict:
    """The recall part of one operating point: mean, Robustness-δ@K, zero-recall count, histogram."""
    return {
        "recall_mean": float(np.mean(recalls)),
        "robustness": robustness(recalls, deltas),
        "zero_recall_queries": int(np.sum(recalls == 0)),
        "recall_histogram": recall_histogram(recalls, k),
        "n_queries": int(len(recalls)),
    }
