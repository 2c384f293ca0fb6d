"""Graded utility metrics and their operational ceilings (paper 001, section 2 and appendix A;
docs/methods.md#8-graded-utility-metrics).

Inputs are numpy arrays, one row per query:

* ``ranked`` — int array ``(Q, N)``: the utility grade (1–5) of the passage at each rank of the
  run, ``0`` for a passage outside the judged pool P_q (unjudged), ``-1`` for padding after a list
  shorter than N;
* ``pool_counts`` — int array ``(Q, 6)``: ``pool_counts[q, g]`` = n_g, the number of passages of
  grade g in P_q (column 0 unused).

The top-K of a ranking is consumed as a *set*. Every function returns one float per query, with
``NaN`` where docs/methods.md#8-graded-utility-metrics says the metric is undefined (NA).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

N_GRADE_COLUMNS = 6  # column g holds grade g; column 0 is "unjudged"
UNJUDGED = 0
PADDING = -1

# Stage attribution codes (docs/methods.md#8-graded-utility-metrics, "beyond the paper").
STAGES = ("ok", "retrieval_miss", "ordering_miss", "generation_miss")


@dataclass(frozen=True)
class RarityWeights:
    """Parameters of the rarity-aware weights; the seed's own caps were lost, these defaults are ours."""

    alpha: float = 1.0
    cap4: float = 0.8
    cap3: float = 0.4
    fallback4: float = 0.8
    fallback3: float = 0.4

    def to_json(self) -> dict[str, float]:
        return asdict(self)


DEFAULT_WEIGHTS = RarityWeights()


def rarity_weights(pool_counts: np.ndarray, params: RarityWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """Per-query weight of each grade, shape ``(Q, 6)`` (docs/methods.md#8-graded-utility-metrics, paper 001 §2).

    w_5 = 1; w_2 = w_1 = 0 (and 0 for unjudged); if n_5 > 0, w_g = min(c_g, (n_5 / n_g)^α) for
    g ∈ {4, 3} (a grade with n_g = 0 gets its cap; it never contributes); if n_5 = 0, w_4 = f_4 and
    w_3 = f_3.
    """
    counts = np.atleast_2d(np.asarray(pool_counts, dtype=np.float64))
    n5 = counts[:, 5]
    weights = np.zeros((counts.shape[0], N_GRADE_COLUMNS))
    weights[:, 5] = 1.0
    for grade, cap, fallback in ((4, params.cap4, params.fallback4), (3, params.cap3, params.fallback3)):
        n_g = counts[:, grade]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(n_g > 0, n5 / np.where(n_g > 0, n_g, 1.0), np.inf) ** params.alpha
        weights[:, grade] = np.where(n5 > 0, np.minimum(cap, ratio), fallback)
    return weights


def _top_weights_sum(weights: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Sum of the k largest weights of a multiset holding counts[:, g] items of weight weights[:, g]
    (g = 3, 4, 5; the other grades weigh 0)."""
    w = weights[:, 3:6]
    n = np.asarray(counts, dtype=np.float64)[:, 3:6]
    order = np.argsort(-w, axis=1, kind="stable")
    w_sorted = np.take_along_axis(w, order, axis=1)
    n_sorted = np.take_along_axis(n, order, axis=1)
    before = np.cumsum(n_sorted, axis=1) - n_sorted
    taken = np.clip(k - before, 0.0, n_sorted)
    return (w_sorted * taken).sum(axis=1)


def _grade_counts(ranked: np.ndarray, depth: int) -> np.ndarray:
    """Counts of each grade (columns 0–5) among the first ``depth`` ranks; padding is not counted."""
    top = np.asarray(ranked)[:, :depth]
    return np.stack([(top == g).sum(axis=1) for g in range(N_GRADE_COLUMNS)], axis=1)


def _observed_gain(ranked: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    top = np.asarray(ranked)[:, :k]
    w = np.take_along_axis(weights, np.maximum(top, 0).astype(np.intp), axis=1)
    return np.where(top > 0, w, 0.0).sum(axis=1)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ra_nwg(ranked: np.ndarray, pool_counts: np.ndarray, k: int, params: RarityWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """RA-nWG@K = G_obs / G_ideal (paper 001 §2; docs/methods.md#8-graded-utility-metrics).

    G_obs = Σ w_g(d) over the top-K as a set; G_ideal = the K largest weights in P_q; NA when
    G_ideal = 0 (no passage of grade ≥ 3 in the pool).
    """
    weights = rarity_weights(pool_counts, params)
    return _ratio(_observed_gain(ranked, weights, k), _top_weights_sum(weights, pool_counts, k))


def proc(ranked: np.ndarray, pool_counts: np.ndarray, k: int, pool_depth: int,
         params: RarityWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """PROC@K for the candidate pool C = the run's top ``pool_depth`` (paper 001 §2; docs/methods.md#8-graded-utility-metrics).

    PROC = (the K largest weights among C ∩ P_q, summed) / G_ideal(q, K): the best RA-nWG@K any
    reordering of C could reach. NA when G_ideal = 0.
    """
    weights = rarity_weights(pool_counts, params)
    reachable = _top_weights_sum(weights, _grade_counts(ranked, pool_depth), k)
    return _ratio(reachable, _top_weights_sum(weights, pool_counts, k))


def pct_proc(ranked: np.ndarray, pool_counts: np.ndarray, k: int, pool_depth: int,
             params: RarityWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """%PROC@K = RA-nWG@K / PROC@K: the share of the reachable ceiling realised; NA when PROC = 0 or NA."""
    weights = rarity_weights(pool_counts, params)
    observed = _observed_gain(ranked, weights, k)
    reachable = _top_weights_sum(weights, _grade_counts(ranked, pool_depth), k)
    ideal = _top_weights_sum(weights, pool_counts, k)
    return np.where(ideal > 0, _ratio(observed, reachable), np.nan)


def n_recall(ranked: np.ndarray, pool_counts: np.ndarray, k: int, min_grade: int = 4) -> np.ndarray:
    """N-Recall{min_grade}+@K = |{d ∈ top-K : g ≥ min_grade}| / min(K, Σ_{g ≥ min_grade} n_g);
    NA when the pool holds no such passage (docs/methods.md#8-graded-utility-metrics: N-Recall4+ with min_grade 4, N-Recall5 with 5)."""
    top = np.asarray(ranked)[:, :k]
    found = (top >= min_grade).sum(axis=1).astype(np.float64)
    available = np.asarray(pool_counts)[:, min_grade:].sum(axis=1)
    return _ratio(found, np.minimum(k, available).astype(np.float64))


def hit(ranked: np.ndarray, k: int, gold: int = 4) -> np.ndarray:
    """Hit@K = 1 if any top-K passage has grade ≥ gold, else 0 (always defined)."""
    return np.asarray((np.asarray(ranked)[:, :k] >= gold).any(axis=1), dtype=np.float64)


def harm(ranked: np.ndarray, k: int, harm_max: int = 2) -> np.ndarray:
    """Harm@K = |{judged d ∈ top-K : g ≤ harm_max}| / K (always defined)."""
    top = np.asarray(ranked)[:, :k]
    return ((top >= 1) & (top <= harm_max)).sum(axis=1) / float(k)


def unjudged(ranked: np.ndarray, k: int) -> np.ndarray:
    """Unjudged@K = |{d ∈ top-K : d ∉ P_q}| / K (always defined)."""
    return (np.asarray(ranked)[:, :k] == UNJUDGED).sum(axis=1) / float(k)


def stage_attribution(ranked: np.ndarray, k: int, pool_depth: int, answer_grades: np.ndarray,
                      gold: int = 4) -> np.ndarray:
    """Stage code per query (index into :data:`STAGES`), ``-1`` where the answer grade is missing.

    docs/methods.md#8-graded-utility-metrics, in this order: *ok* = answer grade ≥ gold; otherwise *retrieval miss* = no passage of
    grade ≥ gold in C (the top ``pool_depth``); *ordering miss* = one in C but none in the top-K;
    *generation miss* = one in the top-K but the answer grade < gold.
    """
    top = np.asarray(ranked)
    answers = np.asarray(answer_grades, dtype=np.float64)
    in_pool = (top[:, :pool_depth] >= gold).any(axis=1)
    in_top_k = (top[:, :k] >= gold).any(axis=1)
    codes = np.where(in_top_k, 3, np.where(in_pool, 2, 1))
    codes = np.where(answers >= gold, 0, codes)
    return np.where(np.isnan(answers), -1, codes)
