"""How unevenly useful evidence is spread over queries (paper 001, §3.5 "Label heterogeneity").

Per query, from the judged pool: n5 and n4 (passages of grade 5 and 4), n4+5 = n4 + n5, and the
pool prevalence of grade 4+5, n4+5 / (judged passages). Reported as median and mean over queries,
as the paper's "median per-query counts — grade-5: 4.0 (mean 10.7) … median pool prevalence of
grade-4 + grade-5 12.6%". Wide spreads are why RA-nWG normalises per query.
"""

from __future__ import annotations

import numpy as np

from ragdiag.results.evaluate import LabelHeterogeneity, Spread


def _spread(values: np.ndarray) -> Spread:
    return Spread(float(np.median(values)), float(np.mean(values)))


def label_heterogeneity(pool_counts: np.ndarray) -> LabelHeterogeneity:
    """From n_g per query (shape (Q, 6), column g = passages of grade g; column 0 unused)."""
    counts = np.asarray(pool_counts, dtype=np.float64)
    n5, n4 = counts[:, 5], counts[:, 4]
    judged = counts[:, 1:].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        prevalence = np.where(judged > 0, (n4 + n5) / judged, 0.0)
    return LabelHeterogeneity(queries=int(counts.shape[0]), grade5=_spread(n5), grade4=_spread(n4),
                              grade45=_spread(n4 + n5), prevalence45=_spread(prevalence),
                              queries_without_grade5=int((n5 == 0).sum()))

