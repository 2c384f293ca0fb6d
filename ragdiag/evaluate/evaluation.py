"""``ragdiag evaluate``: graded utility metrics, ceilings and standard metrics for one or more runs,
with bootstrap intervals over queries, paired comparisons, the PROC decision and stage attribution.

Formulas: docs/methods.md#8-graded-utility-metrics (paper 001 §2 and appendix A), in :mod:`ragdiag.metrics.graded_utility`;
standard metrics through ir_measures (:mod:`ragdiag.measures.standard`); intervals in
:mod:`ragdiag.evaluate.bootstrap`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.evaluate import bootstrap
from ragdiag.evaluate.inputs import (
    AlignedRun,
    Answers,
    GradedQrels,
    align_run,
    answer_grades,
    load_answers,
    load_graded_qrels,
)
from ragdiag.evaluate.label_heterogeneity import label_heterogeneity
from ragdiag.io.progress import progress_reporter
from ragdiag.measures.registry import EVALUATE, METRIC_NAMES
from ragdiag.measures.scoring import MeasureScorer
from ragdiag.measures.standard import gain_mapping
from ragdiag.metrics import graded_utility as gu
from ragdiag.results.evaluate import (
    Attribution,
    Comparison,
    Decision,
    EvaluateMeta,
    EvaluateResult,
    MetricValue,
    ResultParams,
    RunInfo,
    RunResult,
    StageAtK,
    StageShare,
    Thresholds,
    Verdict,
)

# Decision thresholds on the macro means at the first K (ours; paper 001 gives the logic, not numbers).
PROC_RETRIEVAL_BOUND_BELOW = 0.8
PCT_PROC_ORDERING_BOUND_BELOW = 0.9
VERDICT_ADVICE = {
    "retrieval-bound": "the useful passages are not in the candidate pool: fix retrieval (hybrid, ANN tuning, query rewriting)",
    "ordering-bound": "the pool holds them but the top-K misses them: fix ordering (reranking)",
    "near ceiling": "the top-K realises most of what the pool allows",
}


@dataclass(frozen=True)
class EvaluateParams:
    """Every knob of an evaluation (all printed with the result)."""

    ks: tuple[int, ...] = (10, 20, 30)
    pool_depth: int = 100
    metrics: tuple[str, ...] = METRIC_NAMES
    gold: int = 4
    harm_max: int = 2
    weights: gu.RarityWeights = field(default_factory=gu.RarityWeights)
    bootstrap: int = 1000
    seed: int = 0


def measure_scorer(qrels: GradedQrels, p: EvaluateParams) -> MeasureScorer:
    """The registry's implementations of the requested metrics, plus PROC and %PROC for the decision (the
    measures on the grade matrix first, then the standard ones): built once (the trec_eval evaluator with
    it) and shared by every run."""
    chosen = [m for m in p.metrics if EVALUATE[m].kind != "standard"]
    chosen += [needed for needed in ("proc", "pct_proc") if needed not in chosen]
    chosen += [m for m in p.metrics if EVALUATE[m].kind == "standard"]
    return MeasureScorer(EVALUATE.select(chosen), qrels.query_ids, p.ks, p, qrels.grades)


def run_values(run: AlignedRun, qrels: GradedQrels, counts: np.ndarray, p: EvaluateParams,
               scorer: MeasureScorer | None = None) -> dict[tuple[str, int], np.ndarray]:
    """(metric, k) → per-query values for every requested metric, plus PROC and %PROC for the decision."""
    if scorer is None:
        scorer = measure_scorer(qrels, p)
    return scorer.values(scorer.run(run.ranked, counts, run.ids))


def verdict(proc_mean: float | None, pct_proc_mean: float | None) -> str | None:
    """'retrieval-bound' if PROC < 0.8; else 'ordering-bound' if %PROC < 0.9; else 'near ceiling'."""
    if proc_mean is None:
        return None
    if proc_mean < PROC_RETRIEVAL_BOUND_BELOW:
        return "retrieval-bound"
    if pct_proc_mean is None or pct_proc_mean < PCT_PROC_ORDERING_BOUND_BELOW:
        return "ordering-bound"
    return "near ceiling"


class _Columns:
    """Per-query columns collected for one shared bootstrap."""

    def __init__(self) -> None:
        self.keys: list[tuple] = []
        self.arrays: list[np.ndarray] = []

    def add(self, key: tuple, values: np.ndarray) -> None:
        self.keys.append(key)
        self.arrays.append(np.asarray(values, dtype=np.float64))

    def summarise(self, replicates: int, seed: int) -> dict[tuple, bootstrap.Summary]:
        if not self.keys:
            return {}
        summaries = bootstrap.summarise(np.stack(self.arrays, axis=1), replicates, seed)
        return dict(zip(self.keys, summaries))


def _estimate(summary: bootstrap.Summary) -> tuple[float | None, list[float] | None, int]:
    return summary.value, list(summary.ci) if summary.ci else None, summary.n_defined


def _decision(summary: dict, run: str, ks: Sequence[int]) -> Decision:
    """The PROC decision at the first K, and the verdict at every K."""
    by_k = []
    for k in ks:
        proc_m = summary[("metric", run, "proc", k)].value
        pct_m = summary[("metric", run, "pct_proc", k)].value
        by_k.append(Verdict(k, verdict(proc_m, pct_m), proc_m, pct_m))
    first = by_k[0]
    return Decision(first.k, first.verdict, first.proc, first.pct_proc, VERDICT_ADVICE.get(first.verdict or ""), by_k,
                    Thresholds(PROC_RETRIEVAL_BOUND_BELOW, PCT_PROC_ORDERING_BOUND_BELOW))


def evaluate(qrels: GradedQrels, runs: Sequence[AlignedRun], p: EvaluateParams,
             answers: Answers | None = None, answers_source: str = "") -> tuple[EvaluateResult, list[dict[str, Any]]]:
    """The result (``params``, ``runs``, ``comparisons``; the caller adds ``meta``) and the per-query rows."""
    counts = qrels.pool_counts()
    query_ids = qrels.query_ids
    scorer = measure_scorer(qrels, p)
    per_run = {run.name: run_values(run, qrels, counts, p, scorer) for run in runs}
    cols = _Columns()
    for run in runs:
        for key, arr in per_run[run.name].items():
            cols.add(("metric", run.name) + key, arr)
    pairs = list(combinations([r.name for r in runs], 2))
    for a, b in pairs:
        for m in p.metrics:
            for k in p.ks:
                cols.add(("diff", a, b, m, k), per_run[b][(m, k)] - per_run[a][(m, k)])
    stages: dict[tuple[str, int], np.ndarray] = {}
    matched: dict[tuple[str, int], int] = {}
    for run in runs:
        for k in p.ks:
            found = answer_grades(answers, run, len(runs), query_ids, k, answers_source) if answers else None
            if found is None or found[1] == 0:
                continue
            codes = gu.stage_attribution(run.ranked, k, p.pool_depth, found[0], p.gold)
            stages[(run.name, k)], matched[(run.name, k)] = codes, found[1]
            for s, stage in enumerate(gu.STAGES):
                cols.add(("stage", run.name, k, stage), np.where(codes < 0, np.nan, (codes == s).astype(np.float64)))
    summary = cols.summarise(p.bootstrap, p.seed)

    out_runs = []
    for run in runs:
        metrics = [MetricValue(m, k, *_estimate(summary[("metric", run.name, m, k)])) for m in p.metrics for k in p.ks]
        attribution = None
        if answers:
            attribution = Attribution(answers_source)
            for k in p.ks:
                if (run.name, k) not in stages:
                    continue
                codes = stages[(run.name, k)]
                shares = {s: StageShare(*_estimate(summary[("stage", run.name, k, s)]), int((codes == i).sum()))
                          for i, s in enumerate(gu.STAGES)}
                attribution.by_k.append(StageAtK(k, matched[(run.name, k)], int((codes >= 0).sum()), shares))
            if not attribution.by_k:
                attribution.note = (f"no answer in {answers_source} matches run '{run.name}' (E = run name) "
                                    f"at K in {list(p.ks)}")
        out_runs.append(RunResult(run.name, metrics, _decision(summary, run.name, p.ks), attribution))

    comparisons = []
    for a, b in pairs:
        for m in p.metrics:
            for k in p.ks:
                diff = summary[("diff", a, b, m, k)]
                higher, lower, n_both = bootstrap.paired_shares(per_run[a][(m, k)], per_run[b][(m, k)])
                improved, worsened = (lower, higher) if EVALUATE.lower_is_better(m) else (higher, lower)
                comparisons.append(Comparison(a, b, m, k, diff.value, list(diff.ci) if diff.ci else None, improved, worsened,
                                              n_both))

    w = p.weights
    params = ResultParams(list(p.ks), w.alpha, w.cap4, w.cap3, w.fallback4, w.fallback3, p.gold, p.harm_max,
                          p.pool_depth, list(p.metrics), p.bootstrap, p.seed)
    result = EvaluateResult(None, params, out_runs, comparisons, label_heterogeneity(counts))
    rows = _per_query_rows(runs, per_run, stages, query_ids, p)
    return result, rows


def _per_query_rows(runs: Sequence[AlignedRun], per_run: dict, stages: dict, query_ids: Sequence[str],
                    p: EvaluateParams) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        for k in p.ks:
            code = stages.get((run.name, k))
            columns = [[None if v != v else v for v in per_run[run.name][(m, k)].tolist()] for m in p.metrics]
            stage = None if code is None else [gu.STAGES[c] if c >= 0 else None for c in code.tolist()]
            for i, q in enumerate(query_ids):
                row: dict[str, Any] = {"run": run.name, "query_id": q, "k": k}
                row.update(zip(p.metrics, [column[i] for column in columns]))
                if stage is not None:
                    row["stage"] = stage[i]
                rows.append(row)
    return rows


def _lower_is_better() -> list[str]:
    return [m.name for m in EVALUATE.measures if m.lower_is_better]


def conventions(p: EvaluateParams, qrels: GradedQrels) -> dict[str, Any]:
    """The notes printed with every result: weights' origin, label mappings, bootstrap, direction."""
    notes = {
        "weights": "rarity-aware weights w5=1, w4/w3=min(cap, (n5/n_g)^alpha) if n5>0 else fallback, w2=w1=0 "
                   "(docs/methods.md#8-graded-utility-metrics); the caps and fallbacks are ragdiag defaults "
                   "(paper 001's numbers were lost)",
        "standard_metrics": gain_mapping(p.gold),
        "bootstrap": f"{p.bootstrap} replicates over queries, seed {p.seed}, 95% percentile intervals; "
                     "comparisons share the draws (paired)",
        "comparison": "diff = b - a (macro mean over queries where both are defined); improved = share of those "
                      f"queries where b is better than a (higher, or lower for {' and '.join(_lower_is_better())}), worsened = "
                      "share where b is worse",
        "attribution": f"per query, in this order: ok = answer grade >= {p.gold}; retrieval miss = no passage of "
                       f"grade >= {p.gold} in the top {p.pool_depth}; ordering miss = one there but none in the "
                       f"top-K; generation miss = one in the top-K but answer grade < {p.gold}",
    }
    if qrels.binary:
        notes["qrels"] = "binary qrels: relevant (1) read as grade 5, not relevant (0) as grade 1"
    return notes


def check_params(p: EvaluateParams) -> None:
    """Cross-option checks done before any file is read (single-option ranges are checked by the CLI)."""
    if not p.ks:
        raise RagdiagError("no cut-off K given")
    if p.pool_depth < max(p.ks):
        raise RagdiagError(f"the pool depth {p.pool_depth} is below the largest K {max(p.ks)}: PROC needs a pool at least K deep")


def evaluate_files(qrels_path: Path, run_paths: Sequence[Path], p: EvaluateParams, answers_path: Path | None = None,
                   progress: bool = True) -> tuple[EvaluateResult, list[dict[str, Any]]]:
    """Read the qrels, every run and the answers, evaluate; returns the result (the caller stamps its
    run record) and the per-query rows. Progress (one step per file read and one for the metrics and bootstrap) goes to
    stderr through :mod:`ragdiag.io.progress`, silent for short work."""
    check_params(p)
    started = time.perf_counter()
    steps = 2 + len(run_paths) + (answers_path is not None)
    with progress_reporter("ragdiag evaluate: reading inputs, metrics and bootstrap", steps, enabled=progress) as bar:
        qrels = load_graded_qrels(qrels_path)
        bar.advance()
        runs: list[AlignedRun] = []
        for path in run_paths:
            runs.append(align_run(path, qrels, [r.name for r in runs]))
            bar.advance()
        answers = load_answers(answers_path) if answers_path is not None else None
        if answers_path is not None:
            bar.advance()
        result, rows = evaluate_aligned(qrels_path, qrels, runs, p, started, answers, str(answers_path or ""))
        bar.advance()
    return result, rows


def evaluate_aligned(qrels_path: Path, qrels: GradedQrels, runs: list[AlignedRun], p: EvaluateParams, started: float,
                     answers: Any = None, answers_source: str = "") -> tuple[EvaluateResult, list[dict[str, Any]]]:
    """:func:`evaluate` on runs already aligned with the qrels, with the result's ``meta`` (the inputs, the
    conventions, the seconds since ``started``): what ``evaluate_files`` and the pipeline's evaluate stage share."""
    result, rows = evaluate(qrels, runs, p, answers, answers_source)
    result.meta = EvaluateMeta("ragdiag evaluate", str(qrels_path), qrels.binary, len(qrels.query_ids),
                               [RunInfo(r.name, r.source, r.depth, r.skipped_queries) for r in runs],
                               conventions(p, qrels), round(time.perf_counter() - started, 3))
    return result, rows
