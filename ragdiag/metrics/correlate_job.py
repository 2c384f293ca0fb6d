"""The whole ``ragdiag correlate`` job: load graded rows, analyse, assemble the report with its meta."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ragdiag.data.graded_table import GradedTable
from ragdiag.data.loaders import load_graded_dataset, load_graded_file
from ragdiag.errors import RagdiagError
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from ragdiag.metrics.analysis import CorrelateOptions, run_correlate
from ragdiag.metrics.system_level import system_level
from ragdiag.report.provenance import base_meta


def load_graded(graded: Path | None, dataset: str | None, offline: bool = False, fallback: bool = True,
                hf_repo: str | None = None) -> GradedTable:
    """``--graded PATH`` or ``--dataset NAME`` (exactly one)."""
    if (graded is None) == (dataset is None):
        raise RagdiagError("give exactly one of --dataset NAME or --graded PATH")
    if graded is not None:
        return load_graded_file(graded)
    return load_graded_dataset(dataset, offline=offline, fallback=fallback, repo=hf_repo)


def correlate_report(table: GradedTable, opts: CorrelateOptions, by_config: bool = False,
                     deltas: tuple[float, ...] = (0.1, 0.3, 0.5), progress=None) -> dict:
    """Results, comparisons, system view and verdicts, with a meta block saying how they were made."""
    analysis = run_correlate(table, opts, progress) if progress else run_correlate(table, opts)
    source = table.source
    options = asdict(opts)
    meta = base_meta(
        "correlate",
        source=source.name,
        source_sha256=source.sha256,
        simulated_grades=source.simulated_grades,
        grades="simulated (bundled sample, see fixtures/retrieval-response-sample/README.md)"
        if source.simulated_grades else "as given in the source",
        notice=source.notice,
        rows=len(table),
        skipped_missing_grade=table.skipped_missing_grade,
        segments=opts.segments,
        min_samples=opts.min_samples,
        measures=list(opts.measures),
        kinds=list(opts.kinds),
        alpha_grid=opts.alpha_grid,
        alpha_grid_size=analysis.pop("alpha_grid_size"),
        xk=opts.xk,
        ties="exact to 12 significant digits" if opts.exact_ties else "float64 bits (paper parity)",
        bootstrap=opts.bootstrap,
        seed=opts.seed,
        compare=list(opts.compare) if opts.compare else None,
        options={k: list(v) if isinstance(v, tuple) else v for k, v in options.items()},
    )
    report = {"meta": meta, **analysis}
    if by_config:
        report["system"] = system_level(table, opts.measures, deltas, parse_alpha_grid(opts.alpha_grid), opts.xk)
    return report
