"""The whole ``ragdiag correlate`` analysis on a loaded table: results, comparisons, system view,
verdicts, and the ``meta`` block saying how they were made, as a :class:`CorrelateResult`.

It computes and returns; it writes nothing and stamps no run record. Loading lives in
:mod:`ragdiag.data.loaders` (``load_graded``); the run record and the writes in
:mod:`ragdiag.commands.correlate` (and :mod:`ragdiag.commands.pipeline` for ``correlation.json``).
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

import numpy as np

from ragdiag import __version__
from ragdiag.data.graded_table import GradedTable
from ragdiag.io.redact import redact_arg
from ragdiag.io.run_record import package_versions
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from ragdiag.metrics.analysis import CorrelateOptions, run_correlate
from ragdiag.metrics.coverage import complete_case_table, table_coverage
from ragdiag.metrics.measure_tables import MAX_GRADE_CLASSES, grades_rounded
from ragdiag.metrics.reference_exclusion import exclude_degenerate, withhold_verdicts
from ragdiag.metrics.system_level import system_level
from ragdiag.results.correlate import CorrelateResult


def legacy_meta(command: str, **fields: Any) -> dict[str, Any]:
    """The ``meta`` keys results have always carried (command, argv, ragdiag, python, versions), the
    same values the run record holds (argv without URL credentials), plus the caller's fields."""
    return {"command": command, "argv": [redact_arg(arg) for arg in sys.argv[1:]], "ragdiag": __version__,
            "python": platform.python_version(), "versions": package_versions(("numpy", "scipy")), **fields}


def gate_prompts(result: CorrelateResult) -> dict[str, str]:
    """The reference gate's pattern file as a run record prompt (name → ``name@version``) when it was applied."""
    gate = result.meta.reference_gate
    if gate is None or not gate.applied or not gate.patterns:
        return {}
    return {gate.patterns.split("@")[0]: gate.patterns}


def run_correlation(table: GradedTable, opts: CorrelateOptions, by_config: bool = False,
                    deltas: tuple[float, ...] = (0.1, 0.3, 0.5),
                    progress: Callable[[list[Any], str], Iterable[Any]] | None = None,
                    complete_cases: bool = False) -> CorrelateResult:
    """Results, comparisons, system view and verdicts, with ``meta`` and ``coverage`` (per K and
    segment, null grades included); ``complete_cases``: only the queries graded at every K. The caller
    stamps the run record (:func:`gate_prompts` names the gate's pattern file for it)."""
    coverage = table_coverage(table, opts.segments)
    coverage["complete_cases"] = {"used": False}
    if complete_cases:
        table, coverage["complete_cases"] = complete_case_table(table)
    table, gate_info = exclude_degenerate(table, opts.segments, opts.keep_degenerate)
    analysis = run_correlate(table, opts, progress) if progress else run_correlate(table, opts)
    withhold_verdicts(analysis, gate_info)
    source = table.source
    options = asdict(opts)
    meta = legacy_meta(
        "correlate",
        source=source.name,
        source_sha256=source.sha256,
        simulated_grades=source.simulated_grades,
        grades="simulated (bundled sample, see fixtures/retrieval-response-sample/README.md)"
        if source.simulated_grades else "as given in the source",
        notice=source.notice,
        rows=len(table),
        skipped_missing_grade=table.skipped_missing_grade,
        reference_gate=gate_info,
        segments=opts.segments,
        min_samples=opts.min_samples,
        measures=list(opts.measures),
        kinds=list(opts.kinds),
        alpha_grid=opts.alpha_grid,
        alpha_grid_size=analysis.pop("alpha_grid_size"),
        xk=opts.xk,
        ties="exact to 12 significant digits" if opts.exact_ties else "float64 bits (--float-ties, paper parity)",
        grade_classes=(f"rounded to 0.01 for the rank correlations (Spearman, Kendall) in segments with more than "
                       f"{MAX_GRADE_CLASSES} distinct grades ({np.unique(table.grade).size} in the file); Pearson "
                       "on the grades as given" if grades_rounded(table.grade) else "as given"),
        bootstrap=opts.bootstrap,
        seed=opts.seed,
        compare=list(opts.compare) if opts.compare else None,
        options={k: list(v) if isinstance(v, tuple) else v for k, v in options.items()},
    )
    report = {"meta": meta, **analysis, "coverage": coverage}
    if by_config:
        report["system"] = system_level(table, opts.measures, deltas, parse_alpha_grid(opts.alpha_grid), opts.xk,
                                        opts.exact_ties)
    return CorrelateResult.from_json(report)
