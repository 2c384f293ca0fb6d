"""The whole ``ragdiag correlate`` analysis on a loaded table: results, comparisons, system view,
verdicts, and the ``meta`` block and run record saying how they were made.

Loading lives in :mod:`ragdiag.data.loaders` (``load_graded``); writing the report in
:mod:`ragdiag.commands.correlate` (``write_outputs``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.io.run_record import RunRecord, package_versions, stamp, start_run
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from ragdiag.metrics.analysis import CorrelateOptions, run_correlate
from ragdiag.metrics.coverage import complete_case_table, table_coverage
from ragdiag.metrics.measure_tables import MAX_GRADE_CLASSES, grades_rounded
from ragdiag.metrics.reference_exclusion import exclude_degenerate, withhold_verdicts
from ragdiag.metrics.system_level import system_level


def legacy_meta(command: str, record: RunRecord, **fields: Any) -> dict[str, Any]:
    """The ``meta`` keys results have always carried (command, argv, ragdiag, python, versions),
    taken from the run record, plus the caller's fields."""
    return {"command": command, "argv": list(record.argv), "ragdiag": record.ragdiag_version,
            "python": record.python, "versions": package_versions(("numpy", "scipy")), **fields}


def correlate_run_record(table: GradedTable, opts: CorrelateOptions) -> RunRecord:
    """A run record for ``ragdiag correlate`` on ``table`` (input named with the sha256 already computed)."""
    record = start_run("ragdiag correlate", seeds={"bootstrap": opts.seed} if opts.bootstrap else {})
    record.inputs.append({"path": table.source.name, "sha256": table.source.sha256})
    return record


def run_correlation(table: GradedTable, opts: CorrelateOptions, by_config: bool = False,
                    deltas: tuple[float, ...] = (0.1, 0.3, 0.5), progress=None,
                    record: RunRecord | None = None, complete_cases: bool = False) -> dict:
    """Results, comparisons, system view and verdicts, with ``meta``, ``run_record`` and ``coverage``
    (per K and segment, null grades included); ``complete_cases``: only the queries graded at every K."""
    record = record or correlate_run_record(table, opts)
    coverage = table_coverage(table, opts.segments)
    coverage["complete_cases"] = {"used": False}
    if complete_cases:
        table, coverage["complete_cases"] = complete_case_table(table)
    table, gate_info = exclude_degenerate(table, opts.segments, opts.keep_degenerate)
    if gate_info.get("applied"):
        record.prompts[gate_info["patterns"].split("@")[0]] = gate_info["patterns"]
    analysis = run_correlate(table, opts, progress) if progress else run_correlate(table, opts)
    withhold_verdicts(analysis, gate_info)
    source = table.source
    options = asdict(opts)
    meta = legacy_meta(
        "correlate", record,
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
    return stamp(report, record)
