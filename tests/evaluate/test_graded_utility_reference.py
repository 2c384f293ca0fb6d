"""Every graded utility metric against a per-query implementation written here from docs/methods.md#8-graded-utility-metrics,
on thousands of random pools: every grade mix (no grade 5, no 4 or 5, only 1–2), empty pools,
K larger than the pool, unjudged and short rankings, α = 0 and odd caps."""

from __future__ import annotations

import math
import random
from collections import Counter
from functools import cache

import numpy as np
import pytest

from ragdiag.evaluate.inputs import grade_matrix, pool_counts
from ragdiag.metrics import graded_utility as gu

TOL = 1e-12


# ------------------------------------------------------------------ reference, straight from §8


def ref_weights(pool: dict[str, int], p: gu.RarityWeights) -> dict[int, float]:
    n = Counter(pool.values())
    w = {5: 1.0, 2: 0.0, 1: 0.0}
    if n[5] > 0:
        w[4] = min(p.cap4, (n[5] / n[4]) ** p.alpha) if n[4] else p.cap4
        w[3] = min(p.cap3, (n[5] / n[3]) ** p.alpha) if n[3] else p.cap3
    else:
        w[4], w[3] = p.fallback4, p.fallback3
    return w


def ref_ideal(pool: dict[str, int], k: int, p: gu.RarityWeights) -> float:
    w = ref_weights(pool, p)
    best = sorted((w[g] for g in pool.values()), reverse=True)[:k]
    total = 0.0
    for x in best:
        total += x
    return total


def ref_ra_nwg(ranking, pool, k, p):
    w = ref_weights(pool, p)
    ideal = ref_ideal(pool, k, p)
    if ideal == 0:
        return None
    return sum(w[pool[d]] for d in ranking[:k] if d in pool) / ideal


def ref_proc(ranking, pool, k, depth, p):
    w = ref_weights(pool, p)
    ideal = ref_ideal(pool, k, p)
    if ideal == 0:
        return None
    reachable = sorted((w[pool[d]] for d in ranking[:depth] if d in pool), reverse=True)[:k]
    return sum(reachable) / ideal


def ref_pct_proc(ranking, pool, k, depth, p):
    ra, pr = ref_ra_nwg(ranking, pool, k, p), ref_proc(ranking, pool, k, depth, p)
    if ra is None or pr is None or pr == 0:
        return None
    return ra / pr


def ref_n_recall(ranking, pool, k, min_grade):
    available = sum(1 for g in pool.values() if g >= min_grade)
    if available == 0:
        return None
    found = sum(1 for d in ranking[:k] if pool.get(d, 0) >= min_grade)
    return found / min(k, available)


def ref_hit(ranking, pool, k, gold):
    return 1.0 if any(pool.get(d, 0) >= gold for d in ranking[:k]) else 0.0


def ref_harm(ranking, pool, k, harm_max):
    return sum(1 for d in ranking[:k] if d in pool and pool[d] <= harm_max) / k


def ref_unjudged(ranking, pool, k):
    return sum(1 for d in ranking[:k] if d not in pool) / k


def ref_stage(ranking, pool, k, depth, answer, gold):
    if answer is None:
        return None
    if answer >= gold:
        return "ok"
    if not any(pool.get(d, 0) >= gold for d in ranking[:depth]):
        return "retrieval_miss"
    if not any(pool.get(d, 0) >= gold for d in ranking[:k]):
        return "ordering_miss"
    return "generation_miss"


# ------------------------------------------------------------------ random data


def random_queries(n: int, seed: int):
    rng = random.Random(seed)
    mixes = [(1, 2, 3, 4, 5), (1, 2, 3, 4), (1, 2, 3), (1, 2), (5,), (4,), (3, 5), (4, 5), (1, 5), (2, 3, 4)]
    rankings, pools, answers = [], [], []
    for q in range(n):
        size = rng.choice([0, 1, 2, 3, 5, 8, 15, 30, 60])
        mix = rng.choice(mixes)
        pool = {f"q{q}d{i}": rng.choice(mix) for i in range(size)}
        judged = list(pool)
        rng.shuffle(judged)
        unjudged = [f"q{q}u{i}" for i in range(rng.choice([0, 0, 3, 20, 50]))]
        ranking = judged[: rng.randint(0, len(judged))] + unjudged
        rng.shuffle(ranking)
        ranking = ranking[: rng.choice([0, 1, 4, 10, 25, 80, 200])]
        rankings.append(ranking)
        pools.append(pool)
        answers.append(None if rng.random() < 0.1 else float(rng.choice([1, 2, 3, 3.5, 4, 4.5, 5])))
    return rankings, pools, answers


@cache
def random_inputs(n: int, seed: int):
    """:func:`random_queries` with their grade matrix and pool counts, built once per seed: the four
    weightings of one (K, depth) share a seed. The arrays are read-only, so no metric can change them
    for the next weighting."""
    rankings, pools, answers = random_queries(n, seed)
    ranked, counts = grade_matrix(rankings, pools), pool_counts(pools)
    ranked.flags.writeable = counts.flags.writeable = False
    return rankings, pools, answers, ranked, counts


def same(got: float, want) -> bool:
    if want is None:
        return math.isnan(got)
    return not math.isnan(got) and abs(got - want) <= TOL


PARAMS = [
    gu.RarityWeights(),
    gu.RarityWeights(alpha=0.0),
    gu.RarityWeights(alpha=2.5, cap4=0.3, cap3=0.9, fallback4=0.1, fallback3=0.7),
    gu.RarityWeights(alpha=0.5, cap4=1.0, cap3=0.0, fallback4=0.0, fallback3=0.0),
]


@pytest.mark.parametrize("params", PARAMS, ids=["default", "alpha0", "odd-caps", "edge-caps"])
@pytest.mark.parametrize("k, depth", [(1, 1), (3, 10), (10, 10), (10, 100), (20, 50), (50, 60)])
def test_every_metric_matches_the_reference(params, k, depth):
    rankings, pools, answers, ranked, counts = random_inputs(2500, seed=k * 1000 + depth)
    got = {
        "ra_nwg": gu.ra_nwg(ranked, counts, k, params),
        "proc": gu.proc(ranked, counts, k, depth, params),
        "pct_proc": gu.pct_proc(ranked, counts, k, depth, params),
        "nrecall4": gu.n_recall(ranked, counts, k, 4),
        "nrecall5": gu.n_recall(ranked, counts, k, 5),
        "hit": gu.hit(ranked, k, 4),
        "hit3": gu.hit(ranked, k, 3),
        "harm": gu.harm(ranked, k, 2),
        "harm1": gu.harm(ranked, k, 1),
        "unjudged": gu.unjudged(ranked, k),
    }
    ans = np.array([np.nan if a is None else a for a in answers])
    stages = gu.stage_attribution(ranked, k, depth, ans, 4)
    for q, (ranking, pool) in enumerate(zip(rankings, pools)):
        want = {
            "ra_nwg": ref_ra_nwg(ranking, pool, k, params),
            "proc": ref_proc(ranking, pool, k, depth, params),
            "pct_proc": ref_pct_proc(ranking, pool, k, depth, params),
            "nrecall4": ref_n_recall(ranking, pool, k, 4),
            "nrecall5": ref_n_recall(ranking, pool, k, 5),
            "hit": ref_hit(ranking, pool, k, 4),
            "hit3": ref_hit(ranking, pool, k, 3),
            "harm": ref_harm(ranking, pool, k, 2),
            "harm1": ref_harm(ranking, pool, k, 1),
            "unjudged": ref_unjudged(ranking, pool, k),
        }
        for name, value in want.items():
            assert same(float(got[name][q]), value), (name, q, ranking, pool, got[name][q], value)
        stage = ref_stage(ranking, pool, k, depth, answers[q], 4)
        assert (stages[q] == -1) if stage is None else gu.STAGES[stages[q]] == stage


def test_random_data_covers_the_na_and_fallback_cases():
    rankings, pools, _ = random_queries(2500, seed=7)
    counts = pool_counts(pools)
    assert (counts.sum(axis=1) == 0).sum() > 50, "empty pools"
    assert ((counts[:, 5] == 0) & (counts[:, 4] > 0)).sum() > 50, "no grade 5: fallback weights"
    assert ((counts[:, 4] + counts[:, 5] == 0) & (counts.sum(axis=1) > 0)).sum() > 50, "neither 4 nor 5"
    assert sum(len(r) > len(p) for r, p in zip(rankings, pools)) > 500, "K larger than the pool"


def test_hand_case_with_rarity_weights():
    # pool: one 5, two 4s, four 3s, three 1s -> w4 = min(0.8, 1/2) = 0.5, w3 = min(0.4, 1/4) = 0.25
    pool = {"a": 5, "b": 4, "c": 4, "d": 3, "e": 3, "f": 3, "g": 3, "h": 1, "i": 1, "j": 1}
    ranking = ["h", "b", "x", "d", "a"]
    ranked, counts = grade_matrix([ranking], [pool]), pool_counts([pool])
    # top-3 = h, b, x -> G_obs = 0 + 0.5 + 0 ; G_ideal(3) = 1 + 0.5 + 0.5 = 2
    assert gu.ra_nwg(ranked, counts, 3)[0] == pytest.approx(0.25)
    # C = top-5 holds a(1), b(0.5), d(0.25) -> best 3 = 1.75 / 2
    assert gu.proc(ranked, counts, 3, 5)[0] == pytest.approx(0.875)
    assert gu.pct_proc(ranked, counts, 3, 5)[0] == pytest.approx(0.25 / 0.875)
    assert gu.n_recall(ranked, counts, 3, 4)[0] == pytest.approx(1 / 3)
    assert gu.harm(ranked, 3)[0] == pytest.approx(1 / 3)
    assert gu.unjudged(ranked, 3)[0] == pytest.approx(1 / 3)
