"""Adaptive search (paper 000 §6): search again with a larger efSearch (HNSW) or nprobe (IVF) only
for the queries whose first pass looks uncertain, against a fixed setting of equal mean cost.

First pass at parameter value p0 for every query; uncertainty = the score gap between rank 1 and
rank K, g = s_1 − s_K for inner product / cosine, g = d_K − d_1 for squared L2. A query with
g < τ is searched again from scratch at p1 and its first-pass result replaced. τ is swept over
quantiles of g, so the share re-searched runs from 0 to 1. A control re-searches a random
(seeded) set of the same size: it tells whether the gap picks the queries that need it.

Cost per query is measured two ways: distance computations (faiss's ``hnsw_stats.ndis`` /
``indexIVF_stats.ndis``, read per query from one-query searches: deterministic), and wall time
(batch first pass + batch second pass over the re-searched queries, median of repeats). The
adaptive policy costs ndis(p0) for every query plus ndis(p1) for the re-searched ones. The fixed
baseline at equal cost is the fixed-setting curve (every value of the spec's sweep) linearly
interpolated at the adaptive policy's mean distance computations (never extrapolated).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from ragdiag.bench.recall import ann_recall, robustness
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import IndexSpec
from ragdiag.retrieval.indexes import set_search_params

SHARES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
_PARAM = {"hnsw": "efSearch", "hnsw_sq8": "efSearch", "ivf": "nprobe", "ivfpq": "nprobe"}


def swept_parameter(spec: IndexSpec) -> str:
    """efSearch for HNSW kinds, nprobe for IVF kinds; other kinds cannot adapt."""
    if spec.kind not in _PARAM:
        raise RagdiagError(f"index spec '{spec.text}': adaptive search raises efSearch or nprobe; {spec.kind} has neither")
    return _PARAM[spec.kind]


def _stats(kind: str):
    import faiss

    # SWIG globals that faiss's stub leaves out of cvar
    return faiss.cvar.hnsw_stats if kind.startswith("hnsw") else faiss.cvar.indexIVF_stats  # type: ignore[attr-defined]


def per_query_search(index, kind: str, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, ids, distance computations) with one search per query, reading faiss's counters."""
    stats = _stats(kind)
    scores, ids = np.empty((len(queries), k), np.float32), np.empty((len(queries), k), np.int64)
    ndis = np.empty(len(queries))
    for i in range(len(queries)):
        stats.reset()
        scores[i], ids[i] = (a[0] for a in index.search(queries[i : i + 1], k))
        ndis[i] = stats.ndis
    return scores, ids, ndis


def score_gap(scores: np.ndarray, metric: str) -> np.ndarray:
    """Rank-1 to rank-K gap: s_1 − s_K (similarities) or d_K − d_1 (squared L2)."""
    return scores[:, -1] - scores[:, 0] if metric == "l2" else scores[:, 0] - scores[:, -1]


def _batch_seconds(index, queries: np.ndarray, k: int, repeats: int) -> float:
    if not len(queries):
        return 0.0
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        index.search(queries, k)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _summary(ids: np.ndarray, true_ids: np.ndarray, deltas: tuple[float, ...]) -> tuple[np.ndarray, dict]:
    recall = ann_recall(ids, true_ids)
    return recall, {"recall_mean": float(recall.mean()), "robustness": robustness(recall, deltas)}


def _at_cost(fixed: list[dict], cost: float, deltas: tuple[float, ...]) -> dict | None:
    """The fixed curve interpolated linearly at mean distance computations ``cost`` (None outside it)."""
    xs = np.array([f["ndis_mean"] for f in fixed])
    order = np.argsort(xs)
    xs = xs[order]
    if not xs[0] - 1e-9 <= cost <= xs[-1] + 1e-9:
        return None

    def at(values: list[float]) -> float:
        return float(np.interp(cost, xs, np.asarray(values)[order]))

    return {"us_per_query": at([f["us_per_query"] for f in fixed]), "recall_mean": at([f["recall_mean"] for f in fixed]),
            "robustness": {f"{d:g}": at([f["robustness"][f"{d:g}"] for f in fixed]) for d in deltas}}


def adaptive_study(index, spec: IndexSpec, queries: np.ndarray, true_ids: np.ndarray, k: int, metric: str,
                   first: int, second: int, deltas: tuple[float, ...], seed: int = 0, repeats: int = 3,
                   shares: tuple[float, ...] = SHARES) -> dict:
    """Adaptive p0 → p1 on a built ``index`` against every fixed value of the spec's swept parameter."""
    param = swept_parameter(spec)
    if not first < second:
        raise RagdiagError(f"adaptive search: the first-pass {param} ({first}) must be below the second ({second})")
    fixed_values = sorted(set(spec.search[param]) | {first, second})
    passes: dict[int, dict[str, Any]] = {}  # per value: arrays (scores, ids, ndis, recall) and numbers
    for value in fixed_values:
        set_search_params(index, {param: value}, k=k)
        scores, ids, ndis = per_query_search(index, spec.kind, queries, k)
        recall, summary = _summary(ids, true_ids, deltas)
        passes[value] = {"scores": scores, "ids": ids, "ndis": ndis, "recall": recall,
                         "seconds": _batch_seconds(index, queries, k, repeats), **summary}
    fixed = [{param: v, "ndis_mean": float(passes[v]["ndis"].mean()),
              "us_per_query": 1e6 * passes[v]["seconds"] / len(queries), "recall_mean": passes[v]["recall_mean"],
              "robustness": passes[v]["robustness"]} for v in fixed_values]
    one, two = passes[first], passes[second]
    gap = score_gap(one["scores"], metric)
    rng = np.random.default_rng(seed)
    rows = []
    for share in shares:
        n_again = round(share * len(queries))
        chosen = np.zeros(len(queries), bool)
        chosen[np.argsort(gap, kind="stable")[:n_again]] = True  # the n smallest gaps: gap < τ
        tau = float(np.sort(gap)[n_again]) if n_again < len(queries) else float("inf")
        ids = np.where(chosen[:, None], two["ids"], one["ids"])
        _, summary = _summary(ids, true_ids, deltas)
        ndis_mean = float(one["ndis"].mean() + (two["ndis"] * chosen).sum() / len(queries))
        set_search_params(index, {param: second}, k=k)
        seconds = one["seconds"] + _batch_seconds(index, queries[chosen], k, repeats)
        random_pick = np.zeros(len(queries), bool)
        random_pick[rng.choice(len(queries), n_again, replace=False)] = True
        _, random_summary = _summary(np.where(random_pick[:, None], two["ids"], one["ids"]), true_ids, deltas)
        rows.append({"share_researched": n_again / len(queries), "threshold": None if not np.isfinite(tau) else tau,
                     "ndis_mean": ndis_mean, "us_per_query": 1e6 * seconds / len(queries), **summary,
                     "random_same_share": random_summary, "fixed_at_equal_ndis": _at_cost(fixed, ndis_mean, deltas)})
    return {"spec": spec.text, "parameter": param, "first": first, "second": second, "k": k, "metric": metric,
            "gap": "s_1 - s_K" if metric != "l2" else "d_K - d_1 (squared L2)", "seed": seed, "repeats": repeats,
            "fixed": fixed, "adaptive": rows}


def parse_adaptive(text: str) -> tuple[int, int]:
    """``'16:128'`` → (16, 128): first-pass and second-pass efSearch/nprobe."""
    first, sep, second = text.partition(":")
    try:
        values = int(first), int(second)
    except ValueError:
        values = None
    if not sep or values is None or not 1 <= values[0] < values[1] <= 2**31 - 1:
        raise RagdiagError(f"--adaptive '{text}': expected FIRST:SECOND, two integers with 1 ≤ FIRST < SECOND "
                           "(efSearch or nprobe of the first pass and of the second)")
    return values


def run_adaptive(base: np.ndarray, queries: np.ndarray, specs: list[IndexSpec], k: int, metric: str,
                 first: int, second: int, deltas: tuple[float, ...], seed: int, repeats: int) -> list[dict]:
    """One study per HNSW/IVF spec (each index built again with ``seed``); other kinds are skipped."""
    from ragdiag.bench.recall import exact_ground_truth
    from ragdiag.retrieval.indexes import build_index

    _, true_ids = exact_ground_truth(base, queries, k, metric)
    studies = []
    for spec in specs:
        if spec.kind not in _PARAM:
            continue
        index = build_index(spec, base, metric, seed=seed)
        studies.append(adaptive_study(index, spec, queries, true_ids, k, metric, first, second, deltas, seed, repeats))
    return studies
