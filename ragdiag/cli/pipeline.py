"""``ragdiag pipeline``: rank → generate → grade → correlate in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli.generate import Dataset, Ks, Ranked, RankWith, Texts
from ragdiag.cli.grade import Repeats, SecondJudge
from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.llm.client import ClientConfig


@llm_command
def pipeline(
    texts: Texts,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Directory for answers.jsonl, graded.json, correlation.json.")],
    ranked: Ranked = None,
    rank_with: RankWith = None,
    k: Ks = "2,3,5",
    dataset: Dataset = "all",
    repeats: Repeats = 1,
    second_judge: SecondJudge = None,
    segments: Annotated[str, typer.Option("--segments", help="Correlation segments: ratio or nw.")] = "ratio",
    min_samples: Annotated[int, typer.Option("--min-samples", help="Drop correlation segments with fewer rows (paper: 300).")] = 300,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Generate answers, grade them and correlate retrieval measures with the grades."""
    from rich.console import Console

    from ragdiag.pipeline.generate import parse_ks
    from ragdiag.pipeline.end_to_end import run_pipeline
    from ragdiag.pipeline.run_meta import check_coverage
    from ragdiag.report.correlate_report import print_report

    judges = [config.model] + ([second_judge] if second_judge else [])
    result = run_pipeline(texts, ranked, rank_with, parse_ks(k), dataset, out_dir, config, repeats, judges, segments,
                          min_samples, progress)
    render_summary("generate", result.generated.summary, {"answers": result.paths["answers"]})
    render_summary("grade", result.graded.summary, {"graded": result.paths["graded"]})
    print_report(result.correlation, Console(width=max(Console().width, 120)))
    typer.echo(f"correlation written to {result.paths['correlation']} "
               f"(same as: {result.correlation['meta']['pipeline']['equivalent_command']})")
    check_coverage(result.graded.summary, min_coverage, result.graded.manifest)
