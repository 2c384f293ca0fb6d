"""Hand-checked statistics of the sweep (ragdiag.sweep.stats)."""

from __future__ import annotations

import numpy as np

from ragdiag.sweep import stats


def test_paired_difference_by_hand():
    exact = np.array([5, 5, 4, 3, np.nan])
    point = np.array([5, 3, 4, 4, 2])
    out = stats.paired_difference(point, exact, n_boot=500, seed=0)
    # pairs graded at both: d = [0, -2, 0, 1]; mean -0.25; one of four fell
    assert out["value"] == -0.25 and out["worse_share"] == 0.25 and out["n_pairs"] == 4
    lo, hi = out["ci"]
    assert -2 <= lo <= -0.25 <= hi <= 1


def test_identical_grades_give_a_zero_width_interval():
    g = np.array([4.0, 4.0, 4.0])
    assert stats.paired_difference(g, g, 200, 0)["ci"] == [0.0, 0.0]
    assert stats.mean_with_ci(np.array([3.0, 3.0]), 200, 0) == (3.0, [3.0, 3.0])


def test_bootstrap_is_seeded():
    rng = np.random.default_rng(1)
    g = rng.integers(1, 6, 50).astype(float)
    assert stats.mean_with_ci(g, 300, 7) == stats.mean_with_ci(g, 300, 7)


def test_recall_buckets_by_hand():
    recalls = np.array([[0.0, 0.1, 0.5, 1.0], [0.9, 1.0, 0.3, 0.2]])
    grades = np.array([[1, 2, 4, 5], [4, 3, 2, np.nan]])
    buckets = {(b["lo"], b["hi"]): b for b in stats.recall_buckets(recalls, grades)}
    assert buckets[(0.0, 0.2)] == {"lo": 0.0, "hi": 0.2, "n": 2, "p_grade_ge4": 0.0}
    assert buckets[(0.2, 0.4)]["n"] == 1  # the ungraded (0.2) pair is left out
    assert buckets[(0.4, 0.6)]["p_grade_ge4"] == 1.0
    assert buckets[(0.8, 1.0)] == {"lo": 0.8, "hi": 1.0, "n": 1, "p_grade_ge4": 1.0}
    assert buckets[(1.0, 1.0)] == {"lo": 1.0, "hi": 1.0, "n": 2, "p_grade_ge4": 0.5}
    assert buckets[(0.6, 0.8)]["p_grade_ge4"] is None


def test_delta_calibration_tracks_the_grade():
    # three points: recall per query; the grade is 5 where recall ≥ 0.5, else 1
    recalls = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 0.6, 0.4, 1.0], [0.2, 0.4, 0.6, 0.0]])
    grades = np.where(recalls >= 0.5, 5.0, 1.0)
    out = {c["delta"]: c for c in stats.delta_calibration(recalls, grades, (0.5, 0.1), 200, 0)}
    assert out[0.5]["spearman"] == 1.0  # Robustness-0.5 equals the share of grade-5 queries
    assert out[0.5]["ci"][0] <= 1.0 <= out[0.5]["ci"][1] + 1e-12
    assert out[0.1]["n_points"] == 3


def _point(label, qps, value, ci):
    return {"label": label, "index": "hnsw", "params": {}, "qps_batch": qps, "recall_mean": 0.9,
            "robustness": {}, "grade_mean": 4.0, "grade_diff_vs_exact": {"value": value, "ci": ci}, "worse_share": 0.1}


def test_recommend_fastest_not_significantly_worse():
    points = [_point("slow", 100, 0.0, [-0.1, 0.1]), _point("fast", 1000, -0.5, [-0.9, -0.1]),
              _point("mid", 500, -0.2, [-0.5, 0.05])]
    rec = stats.recommend(points, exact_qps=50.0, max_drop=None)
    assert rec["point"] == "mid" and rec["speedup_vs_exact"] == 10.0 and rec["candidates"] == 2
    assert stats.recommend(points, 50.0, max_drop=0.1)["point"] == "slow"
    assert stats.recommend([points[1]], 50.0, None)["point"] is None


def test_calibration_replicates_match_scipy_spearman_per_replicate():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(3)
    recalls = rng.choice([0.0, 0.3, 0.6, 1.0], size=(5, 40))
    grades = rng.integers(1, 6, size=(5, 40)).astype(float)
    out = stats.delta_calibration(recalls, grades, (0.5,), 50, 11)[0]
    resamples = np.random.default_rng(11).integers(0, 40, size=(50, 40))
    loop = [spearmanr((recalls[:, idx] >= 0.5).mean(axis=1), grades[:, idx].mean(axis=1)).statistic for idx in resamples]
    loop = np.asarray(loop)[np.isfinite(loop)]
    assert np.allclose(out["ci"], [np.percentile(loop, 2.5), np.percentile(loop, 97.5)], rtol=0, atol=1e-12)


def test_accuracy_buckets_hold_one_recall_level_each_at_k10():
    levels = np.arange(11) / 10  # recall@10 takes the values j/10
    assert stats.accuracy_bucket(levels).tolist() == list(range(11))
    assert stats.accuracy_bucket(np.array([0.05, 0.15, 0.999, 1.0])).tolist() == [0, 1, 9, 10]


def test_relative_accuracy_by_hand():
    # two ANN points, four queries; exact grades per query; threshold 4
    exact = np.array([5.0, 4.0, 2.0, 5.0])
    recalls = np.array([[0.2, 0.2, 0.2, 1.0], [0.4, 0.2, 0.4, np.nan]])
    grades = np.array([[4.0, 1.0, 5.0, 5.0], [2.0, 5.0, 4.0, np.nan]])
    out = stats.relative_accuracy(recalls, grades, exact, 4.0, 200, 0)
    bucket = {b["lo"]: b for b in out["buckets"]}
    # recall 0.2: pairs (p0,q0) (p0,q1) (p0,q2) (p1,q1): point correct 4,_,5,5 → 3 of 4; exact correct q0,q1,_,q1 → 3
    assert bucket[0.2]["n_pairs"] == 4 and bucket[0.2]["n_queries"] == 3
    assert bucket[0.2]["accuracy"] == 0.75 and bucket[0.2]["exact_accuracy"] == 0.75
    assert bucket[0.2]["relative_to_exact"] == 1.0
    # recall 0.4: (p1,q0) wrong, exact right; (p1,q2) right, exact wrong → 1 / 1
    assert bucket[0.4]["accuracy"] == 0.5 and bucket[0.4]["relative_to_exact"] == 1.0
    assert bucket[1.0]["n_pairs"] == 1 and bucket[1.0]["relative_to_exact"] == 1.0
    assert bucket[0.0]["n_pairs"] == 0 and bucket[0.0]["relative_to_exact"] is None and bucket[0.0]["relative_ci"] is None
    assert out["exact_accuracy"] == 0.75 and out["threshold"] == 4.0


def test_relative_accuracy_interval_matches_a_loop_bootstrap():
    rng = np.random.default_rng(5)
    n_points, n_queries, n_boot, seed = 3, 30, 120, 9
    recalls = rng.choice([0.1, 0.2, 0.4, 1.0], size=(n_points, n_queries))
    grades = rng.integers(1, 6, size=(n_points, n_queries)).astype(float)
    grades[0, 3] = np.nan
    exact = rng.integers(2, 6, size=n_queries).astype(float)
    out = stats.relative_accuracy(recalls, grades, exact, 4.0, n_boot, seed)
    draws = np.random.default_rng(seed).integers(0, n_queries, size=(n_boot, n_queries))
    for level, index in ((0.1, 1), (0.2, 2), (0.4, 4), (1.0, 10)):
        bucket = out["buckets"][index]
        ratios, accs = [], []
        for draw in draws:
            hit = exact_hit = n = 0
            for q in draw:  # a query's pairs go together
                for p in range(n_points):
                    if np.isfinite(grades[p, q]) and recalls[p, q] == level:
                        n += 1
                        hit += grades[p, q] >= 4
                        exact_hit += exact[q] >= 4
            if exact_hit:
                ratios.append(hit / exact_hit)
            if n:
                accs.append(hit / n)
        assert bucket["replicates_defined"] == len(ratios)
        assert np.allclose(bucket["relative_ci"], np.percentile(ratios, [2.5, 97.5]), rtol=0, atol=1e-12)
        assert np.allclose(bucket["accuracy_ci"], np.percentile(accs, [2.5, 97.5]), rtol=0, atol=1e-12)
