"""``ragdiag compare``: a paired regression gate with power (issue 31).

:mod:`.inputs` pairs two runs, graded files or per-query tables by query id; :mod:`.paired` holds the
paired tests, intervals and family corrections; :mod:`.planning` the topic-set-size planning and the
judge-noise variance split; :mod:`.gate` the decisions; :mod:`.sequential` and :mod:`.sequential_gate` the
anytime-valid gate; :mod:`.clustered` the cluster-robust paths; :mod:`.judged` the judged loop; :mod:`.checks`
the option and name checks and :mod:`.step_summary` the summary's destinations, shared by both commands. The typed result is
:mod:`ragdiag.results.compare`. Methods: docs/methods.md#regression-gate-compare.
"""
