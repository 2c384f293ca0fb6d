"""The graded utility measures of the evaluate set (docs/methods.md#8-graded-utility-metrics, paper 001 §2),
in the registry's calling convention: ``f(run, ks, settings)`` → per-query values, shape (len(ks), queries).

Each is the formula of :mod:`ragdiag.metrics.graded_utility` on the run's grade matrix, once per cut-off
(every cut-off vectorised over the queries); ``settings`` gives the pool depth, gold grade, harm bound
and rarity weights.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragdiag.measures.scoring import FloatArray, JudgedRun, MeasureSettings, per_k
from ragdiag.metrics import graded_utility as gu


def ra_nwg(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """RA-nWG@K = G_obs / G_ideal."""
    ranked, counts = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.ra_nwg(ranked, counts, k, settings.weights))


def proc(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """PROC@K: the best RA-nWG@K a reordering of the run's top pool-depth reaches."""
    ranked, counts = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.proc(ranked, counts, k, settings.pool_depth, settings.weights))


def pct_proc(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """%PROC@K = RA-nWG@K / PROC@K."""
    ranked, counts = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.pct_proc(ranked, counts, k, settings.pool_depth, settings.weights))


def nrecall4(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """N-Recall4+@K = |{top-K : g ≥ 4}| / min(K, n_4 + n_5)."""
    ranked, counts = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.n_recall(ranked, counts, k, 4))


def nrecall5(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """N-Recall5@K = |{top-K : g = 5}| / min(K, n_5)."""
    ranked, counts = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.n_recall(ranked, counts, k, 5))


def hit(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """Hit@K = 1 if a top-K passage has grade ≥ gold."""
    ranked, _ = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.hit(ranked, k, settings.gold))


def harm(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """Harm@K = |{judged top-K : g ≤ harm_max}| / K."""
    ranked, _ = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.harm(ranked, k, settings.harm_max))


def unjudged(run: JudgedRun, ks: Sequence[int], settings: MeasureSettings) -> FloatArray:
    """Unjudged@K = |{top-K ∉ pool}| / K."""
    ranked, _ = run.grades()
    return per_k(ks, len(ranked), lambda k: gu.unjudged(ranked, k))
