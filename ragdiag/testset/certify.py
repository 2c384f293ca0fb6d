"""The certificate of ``ragdiag testset certify``: do label set A and label set B rank the same
systems alike? Kendall τ-b and τ_AP between the two orderings of the runs' mean scores, τ among the
best ``top`` systems of B, the largest pairwise swap, percentile bootstrap intervals over queries
(paired when A and B judge the same queries, else each side resampled on its own) and the BM25 −
dense gap under each (the lexical-bias signature of questions copied from passages).
Methods: docs/methods.md#testset-certificate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.evaluate.inputs import GradedQrels
from ragdiag.results.testset import Agreement, CertifyResult, LexicalGap, Swap, SystemScore, TopAgreement
from ragdiag.testset.rank_agreement import kendall_tau_b, tau_ap

__all__ = ["MIN_RUNS", "CertifyOptions", "ScoredRuns", "certify", "qrels_file", "score_rankings", "score_runs"]

MIN_RUNS = 5
GOOD_TAU = 0.9  # Voorhees (2000): τ ≥ 0.9 between two rankings of systems counts as equivalent
FAIR_TAU = 0.8


@dataclass(frozen=True)
class CertifyOptions:
    metric: str = "ndcg"
    k: int = 10
    top: int = 5
    bootstrap: int = 1000
    seed: int = 0
    level: float = 0.95
    bm25_run: str | None = None
    dense_run: str | None = None


@dataclass
class ScoredRuns:
    """One label set: ``values[q, r]`` = the metric of run ``r`` on query ``query_ids[q]``."""

    source: str
    query_ids: list[str]
    values: np.ndarray


def qrels_file(path: Path, flag: str) -> Path:
    """A qrels file, or a BEIR folder's ``qrels/test.tsv``."""
    if path.is_dir():
        file = path / "qrels" / "test.tsv"
        if not file.is_file():
            raise RagdiagError(f"{flag} {path}: a folder must hold qrels/test.tsv (BEIR layout); or give the qrels file")
        return file
    if not path.is_file():
        raise RagdiagError(f"{flag} {path}: no such file or folder")
    return path


def score_runs(qrels_path: Path, runs: list[Path], options: CertifyOptions, flag: str) -> ScoredRuns:
    """Every run file's per-query metric under one label set (see :func:`score_rankings`)."""
    from ragdiag.data.qrels_runs import read_run_ids
    from ragdiag.evaluate.inputs import load_graded_qrels

    return score_rankings(load_graded_qrels(qrels_path), [read_run_ids(path) for path in runs],
                          [str(path) for path in runs], options, flag)


def score_rankings(qrels: GradedQrels, rankings: list[dict[str, list[str]]], names: list[str], options: CertifyOptions,
                   flag: str) -> ScoredRuns:
    """Every run's per-query metric under one label set, on the judged queries the runs rank; runs
    that rank different judged queries are refused (their means would not be comparable)."""
    from ragdiag.evaluate.evaluation import EvaluateParams, run_values
    from ragdiag.evaluate.inputs import align_ids

    params = EvaluateParams(ks=(options.k,), pool_depth=max(100, options.k), metrics=(options.metric,), bootstrap=0)
    covered = [[q for q in qrels.query_ids if q in run] for run in rankings]
    for name, ids in zip(names, covered, strict=True):
        if not ids:
            raise DataError(f"{name}: none of the {len(qrels.query_ids)} judged queries of {flag} {qrels.source} is in this run")
    first = set(covered[0])
    for name, ids in zip(names[1:], covered[1:], strict=True):
        if set(ids) != first:
            only = sorted(first - set(ids)) or sorted(set(ids) - first)
            raise RagdiagError(
                f"--runs: {names[0]} and {name} are scored on different queries of {flag} {qrels.source} "
                f"({len(first)} judged queries ranked against {len(ids)}; first differing: '{only[0]}'); "
                "rank the same queries with every run")
    subset = GradedQrels({q: qrels.grades[q] for q in covered[0]}, qrels.binary, qrels.source)
    columns = []
    for name, run in zip(names, rankings, strict=True):
        aligned = align_ids(run, name, subset, ())
        columns.append(run_values(aligned, subset, subset.pool_counts(), params)[(options.metric, options.k)])
    return ScoredRuns(qrels.source, subset.query_ids, np.stack(columns, axis=1).astype(np.float64))


def _interval(samples: np.ndarray, level: float) -> tuple[float | None, float | None]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None, None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def _value(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _agreement(point: float, samples: np.ndarray, level: float) -> Agreement:
    low, high = _interval(samples, level)
    return Agreement(value=_value(point), ci_low=low, ci_high=high)


def _resampled_means(a: ScoredRuns, b: ScoredRuns, o: CertifyOptions) -> tuple[np.ndarray, np.ndarray, bool]:
    """(B, S) mean scores under A and under B over ``o.bootstrap`` seeded resamples of the queries;
    the same resampled queries on both sides when A and B judge the same queries (paired)."""
    rng = np.random.default_rng(o.seed)
    paired = a.query_ids == b.query_ids
    rows_a = rng.integers(0, len(a.query_ids), size=(o.bootstrap, len(a.query_ids)))
    rows_b = rows_a if paired else rng.integers(0, len(b.query_ids), size=(o.bootstrap, len(b.query_ids)))
    return a.values[rows_a].mean(axis=1), b.values[rows_b].mean(axis=1), paired


def _ranks(scores: np.ndarray) -> list[int]:
    """1 = best; equal scores share the better rank."""
    return [int(1 + np.sum(scores > s)) for s in scores]


def _largest_swap(names: list[str], mean_a: np.ndarray, mean_b: np.ndarray) -> Swap | None:
    """The discordant pair with the largest difference under B (the reference), ties by A's."""
    best: tuple[float, float, int, int] | None = None
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            da, db = mean_a[i] - mean_a[j], mean_b[i] - mean_b[j]
            if da * db < 0 and (best is None or (abs(db), abs(da)) > best[:2]):
                best = (abs(db), abs(da), i, j)
    if best is None:
        return None
    i, j = best[2], best[3]
    if mean_b[i] < mean_b[j]:
        i, j = j, i
    return Swap(run_1=names[i], run_2=names[j], delta_a=float(mean_a[i] - mean_a[j]), delta_b=float(mean_b[i] - mean_b[j]))


def _fmt(agreement: Agreement | TopAgreement) -> str:
    if agreement.value is None:
        return "τ undefined (every system tied)"
    low = "?" if agreement.ci_low is None else f"{agreement.ci_low:.2f}"
    high = "?" if agreement.ci_high is None else f"{agreement.ci_high:.2f}"
    return f"τ {agreement.value:.2f} [{low}, {high}]".replace("-", "−")


def _how(value: float | None, low: float | None) -> str:
    """'like' when τ and its lower bound reach 0.9 and 0.8 (Voorhees 2000: τ ≥ 0.9 reads as the same
    ranking), 'like … on these queries, but not surely' when only τ does, 'mostly like' from 0.8,
    'only roughly like' from 0.5, else 'not like'."""
    v, lo = (-1.0 if value is None else value), (-1.0 if low is None else low)
    if v >= GOOD_TAU:
        return "like" if lo >= FAIR_TAU else "like, not surely,"
    if v >= FAIR_TAU:
        return "mostly like"
    return "only roughly like" if v >= 0.5 else "not like"


def verdict(n: int, tau: Agreement, top: TopAgreement) -> str:
    """The certificate in words: the whole ordering, then the top systems (see :func:`_how`)."""
    how = _how(tau.value, tau.ci_low)
    caveat = " (on these queries; the interval is wide)" if how.startswith("like,") else ""
    text = (f"label set A ranks the {n} systems {how.split(',')[0]} label set B{caveat}: {_fmt(tau)}; "
            f"among the top {top.k}, {_fmt(top)}")
    if how.startswith("not"):
        return text + " — do not use A to rank these systems"
    if _how(top.value, top.ci_low) == "like":
        return text + " — A can also pick between the best systems"
    return text + " — do not use A to pick between the best systems"


def certify(names: list[str], a: ScoredRuns, b: ScoredRuns, o: CertifyOptions, meta: dict[str, object]) -> CertifyResult:
    """The certificate of label set A against the reference B for the runs ``names`` (columns of both)."""
    if len(names) < MIN_RUNS:
        raise RagdiagError(f"--runs: {len(names)} runs; a certificate needs at least {MIN_RUNS} (retrieval configurations)")
    if not 2 <= o.top <= len(names):
        raise RagdiagError(f"--top {o.top}: must be between 2 and the number of runs ({len(names)})")
    mean_a, mean_b = a.values.mean(axis=0), b.values.mean(axis=0)
    boot_a, boot_b, paired = _resampled_means(a, b, o)
    tau = _agreement(float(kendall_tau_b(mean_a, mean_b)), kendall_tau_b(boot_a, boot_b), o.level)
    tap = _agreement(float(tau_ap(mean_a, mean_b)), tau_ap(boot_a, boot_b), o.level)
    best = np.argsort(-mean_b, kind="stable")[: o.top]
    top_point = float(kendall_tau_b(mean_a[best], mean_b[best]))
    top_low, top_high = _interval(kendall_tau_b(boot_a[:, best], boot_b[:, best]), o.level)
    top = TopAgreement(k=o.top, runs=[names[i] for i in best], value=_value(top_point), ci_low=top_low, ci_high=top_high)
    rank_a, rank_b = _ranks(mean_a), _ranks(mean_b)
    systems = [SystemScore(run=name, score_a=float(mean_a[i]), score_b=float(mean_b[i]), rank_a=rank_a[i], rank_b=rank_b[i])
               for i, name in enumerate(names)]
    gap = None
    if o.bm25_run is not None and o.dense_run is not None:
        i, j = names.index(o.bm25_run), names.index(o.dense_run)
        a_low, a_high = _interval(boot_a[:, i] - boot_a[:, j], o.level)
        b_low, b_high = _interval(boot_b[:, i] - boot_b[:, j], o.level)
        gap = LexicalGap(bm25=o.bm25_run, dense=o.dense_run, a=float(mean_a[i] - mean_a[j]), a_ci_low=a_low,
                         a_ci_high=a_high, b=float(mean_b[i] - mean_b[j]), b_ci_low=b_low, b_ci_high=b_high)
    full_meta = {**meta, "metric": f"{o.metric}@{o.k}", "runs": len(names), "top": o.top, "bootstrap": o.bootstrap,
                 "seed": o.seed, "level": o.level, "queries_a": len(a.query_ids), "queries_b": len(b.query_ids),
                 "paired": paired}
    return CertifyResult(meta=full_meta, systems=systems, tau=tau, tau_ap=tap, top=top,
                         largest_swap=_largest_swap(names, mean_a, mean_b), gap=gap,
                         verdict=verdict(len(names), tau, top))
