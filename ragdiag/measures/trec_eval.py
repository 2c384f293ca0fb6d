"""trec_eval through pytrec_eval (Van Gysel & de Rijke, SIGIR 2018), the code ir_measures dispatches Recall,
AP and P to: graded labels passed as gain g − 1, the run as strictly decreasing scores ``depth − rank`` (a
score tie keeps the run's order), one evaluator per qrels called once per run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragdiag.extras import require

FloatArray = npt.NDArray[np.float64]


def shifted_qrels(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Qrels with each grade g replaced by the gain g − 1."""
    return {q: {d: int(g) - 1 for d, g in docs.items()} for q, docs in qrels.items()}


def rank_scores(ranking: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """query → {doc: depth − rank}: strictly decreasing scores that reproduce the list order."""
    return {q: dict(zip(ids, map(float, range(len(ids), 0, -1)))) for q, ids in ranking.items()}


class TrecEval:
    """The trec_eval measures of one qrels, for any number of runs: one pytrec_eval evaluator (the code
    ir_measures dispatches Recall, AP and P to), built once at ``relevance_level = gold − 1`` for every
    measure the requested ones read (``"recall.{ks}"`` → ``recall.5,10``) and called once per run."""

    def __init__(self, qrels: Mapping[str, Mapping[str, int]], query_ids: Sequence[str], reads: Sequence[str],
                 ks: Sequence[int], gold: int) -> None:
        pytrec_eval = require("pytrec_eval")  # the eval extra (pytrec-eval-terrier, ir_measures' trec_eval engine)

        self.query_ids = list(query_ids)
        cutoffs = ",".join(str(k) for k in sorted(set(ks)))
        measures = {spec.format(ks=cutoffs) for spec in reads}
        judged = shifted_qrels({q: qrels[q] for q in query_ids})
        self.evaluator: Any = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=gold - 1)

    def columns(self, ranking: Mapping[str, Sequence[str]]) -> dict[str, FloatArray]:
        """trec_eval's name (``recall_10``, ``recip_rank``) → per-query values aligned with the query ids
        (NaN where trec_eval gave none: a query with an empty ranking)."""
        per_query = self.evaluator.evaluate(rank_scores({q: ranking[q] for q in self.query_ids}))
        rows = [per_query.get(q) for q in self.query_ids]
        names = next((list(row) for row in rows if row is not None), [])
        return {name: np.array([np.nan if row is None else row[name] for row in rows], dtype=np.float64) for name in names}
