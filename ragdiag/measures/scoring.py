"""Per-query values of the evaluate set's measures for one run: the registry's implementations, called.

A :class:`JudgedRun` is what an evaluate measure's implementation receives: the run's grade matrix and
the pool's grade counts (:mod:`ragdiag.metrics.graded_utility`'s layout), its ranked ids and the qrels
(the trec_eval measures and nDCG), and the per-query columns of the trec_eval measures the requested
measures ``read`` — computed by one pytrec_eval evaluator per qrels, in one call per run
(:class:`ragdiag.measures.trec_eval.TrecEval`). :class:`MeasureScorer` builds both once and returns
``(name, k) → values`` for every requested measure and cut-off.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ragdiag.measures.core import Measure
from ragdiag.measures.registry import EVALUATE
from ragdiag.measures.trec_eval import TrecEval

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[Any]


class MeasureSettings(Protocol):
    """The parameter values an evaluate measure may read besides K (``EvaluateParams`` is one)."""

    @property
    def pool_depth(self) -> int: ...

    @property
    def gold(self) -> int: ...

    @property
    def harm_max(self) -> int: ...

    @property
    def weights(self) -> Any: ...  # ragdiag.metrics.graded_utility.RarityWeights


@dataclass(frozen=True)
class JudgedRun:
    """One run against graded qrels, rows aligned with ``query_ids`` (what is absent was not given)."""

    query_ids: Sequence[str]
    ranked: IntArray | None = None  # (Q, N) grade at each rank: 1–5, 0 unjudged, −1 padding
    counts: IntArray | None = None  # (Q, 6) grades in each query's pool
    ids: Mapping[str, Sequence[str]] | None = None  # query → ranked doc ids
    qrels: Mapping[str, Mapping[str, int]] | None = None  # query → doc → grade 1–5
    trec_eval: Mapping[str, FloatArray] = field(default_factory=dict)  # "recall_10" → per-query values

    def grades(self) -> tuple[IntArray, IntArray]:
        """(ranked, counts); a measure on the grade matrix needs both."""
        if self.ranked is None or self.counts is None:
            raise ValueError("this measure needs the run's grade matrix and pool counts")
        return self.ranked, self.counts

    def ranking(self) -> tuple[Mapping[str, Sequence[str]], Mapping[str, Mapping[str, int]]]:
        """(ranked ids, qrels); a measure on doc ids needs both."""
        if self.ids is None or self.qrels is None:
            raise ValueError("this measure needs the run's ranked ids and the qrels")
        return self.ids, self.qrels

    def unranked(self) -> npt.NDArray[np.bool_]:
        """True for a query whose ranking is empty."""
        ids, _ = self.ranking()
        return np.array([len(ids.get(q, ())) == 0 for q in self.query_ids], dtype=bool)


def per_k(ks: Sequence[int], rows: int, value_at: Any) -> FloatArray:
    """``value_at(k)`` for each k stacked: shape (len(ks), rows)."""
    if not ks:
        return np.zeros((0, rows))
    out: FloatArray = np.stack([np.asarray(value_at(k), dtype=np.float64) for k in ks])
    return out


def measures_named(names: Sequence[str]) -> tuple[Measure, ...]:
    """The evaluate measures called ``names``, in that order (read from the registry now)."""
    return EVALUATE.select(names)


class MeasureScorer:
    """Every requested evaluate measure of one qrels, for any number of runs: the trec_eval evaluator the
    measures read from is built once (only when one of them reads trec_eval)."""

    def __init__(self, measures: Sequence[Measure], query_ids: Sequence[str], ks: Sequence[int],
                 settings: MeasureSettings, qrels: Mapping[str, Mapping[str, int]] | None = None) -> None:
        self.measures, self.query_ids, self.ks, self.settings = tuple(measures), list(query_ids), list(ks), settings
        self.qrels = qrels
        reads = tuple(dict.fromkeys(spec for m in self.measures for spec in m.reads))
        self.trec: Any = None
        if reads:
            if qrels is None:
                raise ValueError(f"{', '.join(m.name for m in self.measures if m.reads)}: trec_eval measures need the qrels")
            self.trec = TrecEval(qrels, self.query_ids, reads, self.ks, settings.gold)

    def run(self, ranked: IntArray | None = None, counts: IntArray | None = None,
            ids: Mapping[str, Sequence[str]] | None = None) -> JudgedRun:
        """The :class:`JudgedRun` the implementations receive (trec_eval evaluated once for this run)."""
        columns = {} if self.trec is None or ids is None else self.trec.columns(ids)
        return JudgedRun(self.query_ids, ranked, counts, ids, self.qrels, columns)

    def values(self, run: JudgedRun) -> dict[tuple[str, int], FloatArray]:
        """(name, k) → per-query values aligned with the query ids, measures in the order given."""
        out: dict[tuple[str, int], FloatArray] = {}
        for measure in self.measures:
            table = measure.compute()(run, self.ks, self.settings)
            for row, k in enumerate(self.ks):
                out[(measure.name, k)] = table[row]
        return out
