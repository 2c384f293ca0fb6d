"""Dynamic K (paper 001 §5.2, §6): send K_high candidates only to queries that look uncertain.

Each query q carries a signal s_q known at query time. The default is the dense score margin
m_q = score(rank 1) − score(rank r) of a first-stage run (r = ``margin_rank``): a small margin
means the top candidates are hard to tell apart, so the query is escalated when m_q < θ. A signal
from elsewhere (e.g. a names/noise probe drop) escalates when it is *above* θ. θ is swept over the
signal's quantiles; fixed K_low and fixed K_high are the two ends.

For each θ the policy takes, per query, the values of the K_high run (pool depth K_high) when
escalated and of the K_low run otherwise: RA-nWG@k and N-Recall4+@k (do not depend on the pool),
PROC@k (the pool-restricted oracle ceiling at that pool depth) and the candidates sent, K_q, whose
mean scales the reranking cost (tokens per candidate × price). Against fixed K_low and fixed
K_high on the same queries it reports paired differences with bootstrap intervals (one set of
draws over queries shared by every column, :mod:`ragdiag.evaluate.bootstrap`).
"""

from __future__ import annotations

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.evaluate import bootstrap
from ragdiag.evaluate.evaluation import EvaluateParams
from ragdiag.measures.registry import DYNAMIC_K, EVALUATE
from ragdiag.measures.scoring import MeasureScorer
from ragdiag.results.dynamic_k import DynamicKParams, DynamicKResult, PolicyRow, SignalInfo
from ragdiag.results.evaluate import Estimate

METRICS = DYNAMIC_K  # ("ra_nwg", "nrecall4", "proc"), from the measure registry


def check_params(params: DynamicKParams) -> None:
    """Cross-option checks, before any file is read."""
    if params.k_low >= params.k_high:
        raise RagdiagError(f"--k-low {params.k_low} must be below --k-high {params.k_high}")
    if max(params.ks) > params.k_low:
        raise RagdiagError(f"--ks {','.join(map(str, params.ks))}: every cut-off must be ≤ --k-low {params.k_low}")
    if params.escalate_when not in ("below", "above"):
        raise RagdiagError(f"--escalate-when '{params.escalate_when}': choose below or above")


def score_margins(scores: list[list[float]], rank: int) -> np.ndarray:
    """score(rank 1) − score(rank r) per query (r capped at the ranking's length; NaN when empty)."""
    out = np.full(len(scores), np.nan)
    for i, s in enumerate(scores):
        if s:
            out[i] = float(s[0]) - float(s[min(rank, len(s)) - 1])
    return out


def thresholds(signal: np.ndarray, steps: int) -> list[float]:
    """The finite signal's quantiles 0, 1/(steps−1), …, 1, ascending, without repeats (the fixed
    K_low and K_high policies stand for 'nobody' and 'everybody')."""
    finite = signal[np.isfinite(signal)]
    if finite.size == 0:
        raise RagdiagError("the uncertainty signal is undefined for every query")
    return sorted(set(float(x) for x in np.quantile(finite, np.linspace(0.0, 1.0, steps))))


def escalated(signal: np.ndarray, theta: float, escalate_when: str) -> np.ndarray:
    """Queries sent K_high: signal < θ (below) or signal > θ (above); an undefined signal escalates."""
    with np.errstate(invalid="ignore"):
        hit = signal < theta if escalate_when == "below" else signal > theta
    return hit | ~np.isfinite(signal)


def _per_query(ranked: np.ndarray, counts: np.ndarray, pool_depth: int, ks: tuple[int, ...]) -> dict[str, np.ndarray]:
    """``metric@k`` → per-query values, from the registry's implementations at this pool depth."""
    scorer = MeasureScorer(EVALUATE.select(METRICS), (), ks, EvaluateParams(ks=ks, pool_depth=pool_depth))
    return {f"{m}@{k}": values for (m, k), values in scorer.values(scorer.run(ranked, counts)).items()}


def _entry(s: bootstrap.Summary) -> Estimate:
    return Estimate(s.value, list(s.ci) if s.ci else None, s.n_defined)


def dynamic_k(ranked_low: np.ndarray, ranked_high: np.ndarray, counts: np.ndarray, signal: np.ndarray,
              params: DynamicKParams, signal_name: str) -> DynamicKResult:
    """Sweep θ; per policy the means of every metric and their paired differences to fixed K."""
    check_params(params)
    low = _per_query(ranked_low, counts, params.k_low, params.ks)
    high = _per_query(ranked_high, counts, params.k_high, params.ks)
    names = list(low)
    policies: list[tuple[float | None, str, np.ndarray]] = [(None, "fixed K_low", np.zeros(len(signal), dtype=bool))]
    for cut in thresholds(signal, params.steps):
        policies.append((cut, f"θ={cut:.4g}", escalated(signal, cut, params.escalate_when)))
    policies.append((None, "fixed K_high", np.ones(len(signal), dtype=bool)))
    columns, keys = [], []
    for index, (_, _, up) in enumerate(policies):
        values = {n: np.where(up, high[n], low[n]) for n in names}
        for n in names:
            columns += [values[n], values[n] - low[n], values[n] - high[n]]
            keys += [(index, "value", n), (index, "vs_low", n), (index, "vs_high", n)]
    summary = dict(zip(keys, bootstrap.summarise(np.stack(columns, axis=1), params.bootstrap, params.seed)))
    rows = []
    for index, (theta, label, up) in enumerate(policies):
        mean_k = float(np.where(up, params.k_high, params.k_low).mean())
        rows.append(PolicyRow(
            threshold=theta, label=label, share_escalated=float(up.mean()), mean_candidates=mean_k,
            cost_per_1k=1000.0 * mean_k * params.tokens_per_candidate * params.price_per_mtok / 1e6,
            metrics={n: _entry(summary[(index, "value", n)]) for n in names},
            vs_low={n: _entry(summary[(index, "vs_low", n)]) for n in names},
            vs_high={n: _entry(summary[(index, "vs_high", n)]) for n in names}))
    finite = signal[np.isfinite(signal)]
    info = SignalInfo(signal_name, params.escalate_when, int(finite.size), float(np.median(finite)),
                      float(finite.min()), float(finite.max()))
    return DynamicKResult(params, int(len(signal)), info, rows)
