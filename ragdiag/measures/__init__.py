"""The one measure registry (issue 30): every measure ragdiag computes, declared once.

:mod:`ragdiag.measures.core` — a measure family with typed parameters, bound as ``ndcg@10`` (ir_measures'
style); :mod:`ragdiag.measures.registry` — the sets each option offers, their parsers, help, legends
and labels; the implementations each entry names, which every command calls: :mod:`ragdiag.measures.dcg`
(the one nDCG), :mod:`ragdiag.measures.sample` (correlate's per-sample measures),
:mod:`ragdiag.metrics.graded_measures` and :mod:`ragdiag.measures.standard` (evaluate's graded and standard
metrics, called on a run by :mod:`ragdiag.measures.scoring`). Importing this package imports no numpy.
"""

from ragdiag.measures.core import HIGHER, LOWER, BoundMeasure, Direction, Measure, Param, parse_bound
from ragdiag.measures.registry import CORRELATE, EVALUATE, MATCHED_RECALL, QUERY_IMPACT, SETS, MeasureSet

__all__ = ["CORRELATE", "EVALUATE", "HIGHER", "LOWER", "MATCHED_RECALL", "QUERY_IMPACT", "SETS", "BoundMeasure",
           "Direction", "Measure", "MeasureSet", "Param", "parse_bound"]
