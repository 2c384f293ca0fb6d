"""Metrics at matched average recall (paper 000 §4, Figs 3 and 9; note 002 item 5).

Each index family (one ``--index-spec``: one built index, its swept search parameter; a spec
sweeping several search parameters gives one family per value of all but the last) gives a
curve of operating points. At a target average recall r*, the family's operating point is found
by linear interpolation between the two *measured* neighbouring points r_a ≤ r* ≤ r_b (sorted by
average recall): t = (r* − r_a)/(r_b − r_a) and every metric m(r*) = (1 − t)·m_a + t·m_b. A target
outside [min r, max r] of the family is never extrapolated: the family is reported out of range.

Per-query metrics against the exact ground truth (faiss flat top-K; binary relevance = the true
top-K set, ranks i = 1..K of the returned list):

- AP@K = (1/K) Σ_i P@i · rel_i (normalised by the K relevant items, as trec_eval's map_cut);
- nDCG@K = Σ_i rel_i / log2(i + 1) / Σ_{i=1..K} 1 / log2(i + 1) (Järvelin & Kekäläinen 2002; the one
  DCG of :mod:`ragdiag.measures.dcg`, ideal = K ones);
- RR@K = 1 / rank of the exact nearest neighbour (true rank 1) in the returned top-K, 0 if absent;
- hit@K = 1 if the exact nearest neighbour is in the returned top-K.

MAP@K, nDCG@K, MRR@K and hit rate are their means over queries; percentile recall p5/p10/p50 is
``numpy.percentile`` (linear) of the per-query recalls; Robustness-δ@K as :mod:`ragdiag.bench.recall`.
Fig. 3 reports each metric as deviation from the mean over the families in range; Fig. 9 reports
Robustness-δ@K against δ = 1/K, 2/K, …, 1 at the matched recall. Robustness intervals: the same
bootstrap resamples of queries applied to both bracketing points, interpolated with the same t.
"""

from __future__ import annotations

import numpy as np

from ragdiag.bench.intervals import recall_replicates, resample_indices
from ragdiag.measures import dcg
from ragdiag.measures.registry import MATCHED_PERCENTILES, MATCHED_RANKING
from ragdiag.metrics.analysis import percentile_interval

PERCENTILES = MATCHED_PERCENTILES
RANKING = MATCHED_RANKING
_TOL = 1e-12


def ranking_metrics(ids: np.ndarray, true_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query AP@K, nDCG@K, RR@K and hit@K of returned ``ids`` (nq × K) against exact ``true_ids``."""
    k = true_ids.shape[1]
    rel = ((ids[:, :, None] == true_ids[:, None, :]).any(axis=2) & (ids >= 0)).astype(np.float64)
    ranks = np.arange(1, k + 1)
    precision_at = np.cumsum(rel, axis=1) / ranks
    first = (ids == true_ids[:, :1]) & (ids >= 0)
    found = first.any(axis=1)
    return {"map": (precision_at * rel).sum(axis=1) / k,
            "ndcg": dcg.ndcg(rel, np.full(len(rel), k), np.full(len(rel), dcg.ones_ideal(k, k))),
            "mrr": np.where(found, 1.0 / (np.argmax(first, axis=1) + 1), 0.0),
            "hit_rate": found.astype(np.float64)}


def delta_grid(k: int) -> list[float]:
    """δ = 1/K, 2/K, …, 1: every distinct Robustness-δ@K of top-K recall."""
    return [round(j / k, 6) for j in range(1, k + 1)]


def point_profile(recalls: np.ndarray, ids: np.ndarray, true_ids: np.ndarray, deltas: tuple[float, ...]) -> dict:
    """The scalar metrics of one measured operating point."""
    ranking = ranking_metrics(ids, true_ids)
    grid = delta_grid(true_ids.shape[1])
    return {"recall_mean": float(np.mean(recalls)),
            **{name: float(values.mean()) for name, values in ranking.items()},
            **{f"p{q}": float(np.percentile(recalls, q)) for q in PERCENTILES},
            "robustness": {f"{d:g}": float(np.mean(recalls >= d - _TOL)) for d in deltas},
            "robustness_curve": {f"{d:g}": float(np.mean(recalls >= d - _TOL)) for d in grid}}


def _mix(a, b, t: float):
    if isinstance(a, dict):
        return {key: _mix(a[key], b[key], t) for key in a}
    return (1.0 - t) * a + t * b


def bracket(recall_means: list[float], target: float) -> tuple[int, int, float] | None:
    """(index a, index b, t) of the measured points whose average recalls bracket ``target``
    (adjacent in recall order), or None when ``target`` lies outside the measured range."""
    order = sorted(range(len(recall_means)), key=lambda i: recall_means[i])
    for a, b in zip(order, order[1:] + order[-1:]):
        low, high = recall_means[a], recall_means[b]
        if abs(low - target) <= _TOL:
            return a, a, 0.0
        if low < target <= high + _TOL:
            return a, b, (target - low) / (high - low) if high > low else 0.0
    return None


def _label(point: dict, family: list[dict]) -> str:
    """The parameters that vary within the family (e.g. ``efSearch=16``), else all of them."""
    varying = [k for k in point["params"] if len({str(p["params"].get(k)) for p in family}) > 1] or list(point["params"])
    return ",".join(f"{k}={point['params'][k]}" for k in varying) or point["spec"]


def curves(points: list[dict]) -> dict[str, list[int]]:
    """Point indices per one-dimensional family: one per index spec, and, when a spec sweeps several
    search parameters (e.g. nprobe × refine), one per value of all but the last varying one."""
    by_spec: dict[str, list[int]] = {}
    for i, point in enumerate(points):
        by_spec.setdefault(point["spec"], []).append(i)
    out: dict[str, list[int]] = {}
    for spec, members in by_spec.items():
        group = [points[i] for i in members]
        varying = [k for k in group[0]["params"] if len({str(p["params"].get(k)) for p in group}) > 1]
        for i in members:
            fixed = ",".join(f"{k}={points[i]['params'][k]}" for k in varying[:-1])
            out.setdefault(f"{spec} [{fixed}]" if fixed else spec, []).append(i)
    return out


def matched_recall(points: list[dict], recalls: list[np.ndarray], ids: list[np.ndarray], true_ids: np.ndarray,
                   deltas: tuple[float, ...], target: float, n_boot: int, seed: int) -> dict:
    """Per family (index spec): the interpolated operating point at average recall ``target`` and its
    metrics, their deviation from the mean over families in range, and Robustness-δ@K against δ."""
    families = curves(points)
    resamples = resample_indices(true_ids.shape[0], n_boot, seed)
    rows = []
    for name, members in families.items():
        means = [float(np.mean(recalls[i])) for i in members]
        found = bracket(means, target)
        row = {"family": name, "index": points[members[0]]["index"], "measured_recall": [min(means), max(means)]}
        if found is None:
            row.update(in_range=False, reason=f"target recall {target:g} is outside the measured range "
                                               f"{min(means):.4f}–{max(means):.4f} (no extrapolation)")
            rows.append(row)
            continue
        a, b, t = (members[found[0]], members[found[1]], found[2])
        profile = _mix(point_profile(recalls[a], ids[a], true_ids, deltas), point_profile(recalls[b], ids[b], true_ids, deltas), t)
        reps = _mix(recall_replicates(recalls[a], deltas, resamples), recall_replicates(recalls[b], deltas, resamples), t)
        group = [points[i] for i in members]
        row.update(in_range=True, between=[_label(points[a], group), _label(points[b], group)], weight=t,
                   between_recall=[float(np.mean(recalls[a])), float(np.mean(recalls[b]))],
                   nearest=_label(points[min((a, b), key=lambda i: abs(np.mean(recalls[i]) - target))], group),
                   **profile, robustness_ci={f"{d:g}": percentile_interval(reps[:, 1 + j]) for j, d in enumerate(deltas)})
        rows.append(row)
    inside = [r for r in rows if r["in_range"]]
    keys = [*RANKING, *(f"p{q}" for q in PERCENTILES)]
    for row in inside:
        row["deviation"] = {key: row[key] - float(np.mean([r[key] for r in inside])) for key in keys}
        row["deviation"]["robustness"] = {d: row["robustness"][d] - float(np.mean([r["robustness"][d] for r in inside]))
                                          for d in row["robustness"]}
    return {"target_recall": target, "deltas": [float(d) for d in deltas], "delta_grid": delta_grid(true_ids.shape[1]),
            "families_in_range": len(inside), "bootstrap": n_boot, "seed": seed,
            "interpolation": "linear in average recall between the two measured points that bracket the target",
            "families": rows}
