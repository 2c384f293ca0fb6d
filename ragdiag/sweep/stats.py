"""Statistics of an answer sweep (paper 000 §5.3, docs/methods.md#10-answer-sweep).

- Mean grade with a percentile bootstrap interval over queries (``scipy.stats.bootstrap``).
- Paired difference from exact k-NN: d_i = g_point,i − g_exact,i over queries graded at both;
  value = mean d, interval = percentile bootstrap of mean d resampling queries (pairs kept
  together); worse share = fraction of those queries with d_i < 0.
- δ calibration: Spearman ρ across points between Robustness-δ@K and mean grade
  (``scipy.stats.spearmanr``), with a percentile interval from resampling queries (the same
  resample for every point) and recomputing both per point.
- Recall buckets: per (ANN point, query), P(grade ≥ 4) within recall bins.

Seeds: every bootstrap draws from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ragdiag.metrics.analysis import percentile_interval

LEVEL = 0.95
BUCKET_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def _interval(values: np.ndarray, n_boot: int, seed: int) -> list[float] | None:
    from scipy.stats import bootstrap

    values = values[np.isfinite(values)]
    if len(values) == 0 or n_boot == 0:  # no resamples (--bootstrap 0): no interval
        return None
    if np.ptp(values) == 0 or len(values) == 1:  # every resample has the same mean
        return [float(values[0]), float(values[0])]
    result = bootstrap((values,), np.mean, n_resamples=n_boot, method="percentile", confidence_level=LEVEL,
                       rng=np.random.default_rng(seed), vectorized=True)
    return [float(result.confidence_interval.low), float(result.confidence_interval.high)]


def mean_with_ci(grades: np.ndarray, n_boot: int, seed: int) -> tuple[float | None, list[float] | None]:
    """(mean of finite grades, 95% percentile bootstrap interval)."""
    finite = grades[np.isfinite(grades)]
    return (float(finite.mean()) if len(finite) else None), _interval(grades, n_boot, seed)


def paired_difference(point: np.ndarray, exact: np.ndarray, n_boot: int, seed: int) -> dict:
    """Mean paired grade difference from exact, its bootstrap interval, worse share, pairs used."""
    both = np.isfinite(point) & np.isfinite(exact)
    diff = point[both] - exact[both]
    if not len(diff):
        return {"value": None, "ci": None, "worse_share": None, "n_pairs": 0}
    return {"value": float(diff.mean()), "ci": _interval(diff, n_boot, seed),
            "worse_share": float(np.mean(diff < 0)), "n_pairs": int(len(diff))}


def _boot_means(values: np.ndarray, resamples: np.ndarray, chunk: int = 100) -> np.ndarray:
    """(B, P) means over each resample of the query axis of ``values`` (P × n), NaN ignored."""
    return np.concatenate([np.nanmean(values[:, part], axis=-1).T
                           for part in np.array_split(resamples, max(1, len(resamples) // chunk))])


def delta_calibration(recalls: np.ndarray, grades: np.ndarray, deltas: tuple[float, ...], n_boot: int,
                      seed: int) -> list[dict]:
    """Per δ: Spearman ρ (points × queries arrays) of Robustness-δ@K with mean grade, and its interval.

    Replicates: Spearman's ρ as Pearson's r of average ranks (``scipy.stats.rankdata``,
    ``scipy.stats.pearsonr`` along an axis), all replicates at once.
    """
    from scipy.stats import pearsonr, rankdata, spearmanr

    n_points, n_queries = recalls.shape
    resamples = np.random.default_rng(seed).integers(0, n_queries, size=(n_boot, n_queries))
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant inputs: rho is NaN, reported as null
        mean_grade = np.nanmean(grades, axis=1)
        boot_grade = rankdata(_boot_means(grades, resamples), axis=1) if n_boot else None
        for delta in deltas:
            hit = (recalls >= delta - 1e-12).astype(float)
            rho = spearmanr(hit.mean(axis=1), mean_grade).statistic if n_points >= 3 else np.nan
            boot = (pearsonr(rankdata(_boot_means(hit, resamples), axis=1), boot_grade, axis=1).statistic
                    if n_points >= 3 and n_boot else np.array([]))
            finite = boot[np.isfinite(boot)]
            ci = percentile_interval(finite)
            out.append({"delta": float(delta), "spearman": None if not np.isfinite(rho) else float(rho), "ci": ci,
                        "n_points": int(n_points), "replicates_defined": int(len(finite))})
    return out


def recall_buckets(recalls: np.ndarray, grades: np.ndarray) -> list[dict]:
    """P(grade ≥ 4) per recall bin [0,0.2), …, [0.8,1.0) and recall = 1 exactly, over (point, query) pairs."""
    r, g = recalls.ravel(), grades.ravel()
    keep = np.isfinite(g)
    r, g = r[keep], g[keep]
    bins = [(lo, hi, (r >= lo) & (r < hi)) for lo, hi in zip(BUCKET_EDGES[:-1], BUCKET_EDGES[1:])]
    bins.append((1.0, 1.0, r >= 1.0))
    out = []
    for lo, hi, mask in bins:
        n = int(mask.sum())
        out.append({"lo": lo, "hi": hi, "n": n, "p_grade_ge4": float(np.mean(g[mask] >= 4)) if n else None})
    return out


def recommend(points: list[dict], exact_qps: float | None, max_drop: float | None) -> dict:
    """The fastest point not significantly worse than exact (interval upper bound ≥ 0), within ``max_drop``."""
    criterion = ("fastest operating point whose paired grade difference from exact k-NN is not significantly "
                 "negative (95% bootstrap interval reaches 0)")
    if max_drop is not None:
        criterion += f" and whose mean drop is at most {max_drop:g} grade points"
    ok = []
    for point in points:
        diff = point["grade_diff_vs_exact"]
        if diff["value"] is None or diff["ci"] is None or diff["ci"][1] < 0:
            continue
        if max_drop is not None and diff["value"] < -max_drop:
            continue
        ok.append(point)
    if not ok:
        no_interval = points and all(p["grade_diff_vs_exact"]["ci"] is None for p in points)
        reason = ("no 95% intervals to test the criterion on (--bootstrap 0)" if no_interval
                  else "no operating point meets the criterion")
        return {"point": None, "criterion": criterion, "reason": reason}
    best = max(ok, key=lambda p: p["qps_batch"])
    return {"point": best["label"], "index": best["index"], "params": best["params"], "criterion": criterion,
            "qps_batch": best["qps_batch"], "speedup_vs_exact": best["qps_batch"] / exact_qps if exact_qps else None,
            "recall_mean": best["recall_mean"], "robustness": best["robustness"], "grade_mean": best["grade_mean"],
            "grade_diff_vs_exact": {k: best["grade_diff_vs_exact"][k] for k in ("value", "ci")},
            "worse_share": best["worse_share"], "candidates": len(ok)}


ACCURACY_BUCKET_WIDTH = 0.1
PAPER_RELATIVE_ACCURACY = ({"recall": 0.4, "relative": 0.91, "reading": "over 91%"},
                           {"recall": 0.2, "relative": 0.70, "reading": "70%"},
                           {"recall": 0.1, "relative": 0.40, "reading": "40%"})  # paper 000 §5.3, recall@10 levels


def accuracy_bucket(recalls: np.ndarray, width: float = ACCURACY_BUCKET_WIDTH) -> np.ndarray:
    """Bucket index of each per-query recall: ⌊r / width⌋ for r < 1 (bins [0, w), [w, 2w), …), and
    ⌈1 / width⌉ for r = 1 (its own bucket). At K = 10 and width 0.1 each bin holds one recall level j/10."""
    last = round(1.0 / width)
    recalls = np.nan_to_num(np.asarray(recalls, dtype=float))  # a missing recall is left out by the caller
    index = np.floor(recalls / width + 1e-9).astype(int)
    return np.where(recalls >= 1.0 - 1e-12, last, np.minimum(index, last - 1))


def accuracy(grades: np.ndarray, threshold: float) -> float | None:
    """Share of graded answers (finite grades) with grade ≥ ``threshold``."""
    finite = grades[np.isfinite(grades)]
    return float(np.mean(finite >= threshold)) if len(finite) else None


def relative_accuracy(recalls: np.ndarray, grades: np.ndarray, exact: np.ndarray, threshold: float, n_boot: int,
                      seed: int, width: float = ACCURACY_BUCKET_WIDTH) -> dict:
    """Accuracy per recall bucket relative to exact k-NN on the same queries (paper 000 §5.3).

    ``recalls``/``grades``: (points × queries) of the ANN points; ``exact``: the exact-k-NN grade per
    query. Pairs (p, q) with both grades (and the recall) finite fall in bucket b by recall r_pq. With c = 1[grade ≥ t]:
    accuracy_b = Σ c_pq / n_b, exact_b = Σ c_exact,q / n_b over the same pairs, and
    relative_b = accuracy_b / exact_b = Σ c_pq / Σ c_exact,q (None when no exact answer is correct).
    Interval: percentile bootstrap over queries — each replicate draws n query indices with
    ``numpy.random.default_rng(seed).integers(0, n, size=(B, n))`` (a query's pairs go together) and
    recomputes the sums with the query counts as weights; replicates with no correct exact answer are
    dropped and counted (``replicates_defined``).
    """
    n_points, n_queries = grades.shape
    both = np.isfinite(grades) & np.isfinite(exact)[None, :] & np.isfinite(recalls)
    bucket = accuracy_bucket(recalls, width)
    n_buckets = round(1.0 / width) + 1
    hits = (grades >= threshold) & both
    exact_hits = np.broadcast_to(exact >= threshold, grades.shape) & both
    per_query = np.zeros((3, n_queries, n_buckets))  # pairs, point hits, exact hits per (query, bucket)
    for which, mask in enumerate((both, hits, exact_hits)):
        for b in range(n_buckets):
            per_query[which, :, b] = (mask & (bucket == b)).sum(axis=0)
    counts = np.zeros((n_boot, n_queries))
    draws = np.random.default_rng(seed).integers(0, n_queries, size=(n_boot, n_queries))
    for row, draw in enumerate(draws):
        counts[row] = np.bincount(draw, minlength=n_queries)
    pairs, point_hits, exact_sum = (counts @ per_query[i] for i in range(3))  # (B × buckets) each
    out = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in range(n_buckets):
            n_b, a_b, e_b = (float(per_query[i, :, b].sum()) for i in range(3))
            lo = round(b * width, 10) if b < n_buckets - 1 else 1.0
            hi = round(min(1.0, (b + 1) * width), 10) if b < n_buckets - 1 else 1.0
            rel_draws = np.where(exact_sum[:, b] > 0, point_hits[:, b] / exact_sum[:, b], np.nan)
            acc_draws = np.where(pairs[:, b] > 0, point_hits[:, b] / pairs[:, b], np.nan)
            out.append({"lo": lo, "hi": hi, "n_pairs": int(n_b),
                        "n_queries": int((per_query[0, :, b] > 0).sum()),
                        "accuracy": a_b / n_b if n_b else None,
                        "accuracy_ci": percentile_interval(acc_draws) if n_b else None,
                        "exact_accuracy": e_b / n_b if n_b else None,
                        "relative_to_exact": a_b / e_b if e_b else None,
                        "relative_ci": percentile_interval(rel_draws) if e_b else None,
                        "replicates_defined": int(np.isfinite(rel_draws).sum())})
    return {"threshold": float(threshold), "bucket_width": width, "n_points": int(n_points),
            "exact_accuracy": accuracy(exact, threshold), "buckets": out,
            "paper_000": list(PAPER_RELATIVE_ACCURACY)}
