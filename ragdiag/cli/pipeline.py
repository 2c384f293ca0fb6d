"""``ragdiag pipeline``: rank → generate → grade → correlate in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import llm_options as o


def pipeline(
    texts: Annotated[str, typer.Option("--texts", help="Texts samples: JSON/JSONL file, hub-layout directory, or hf:[REPO].")],
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Directory for answers.jsonl, graded.json, correlation.json.")],
    ranked: Annotated[Optional[str], typer.Option("--ranked", help="Ranked samples: file, directory or hf:[REPO].")] = None,
    rank_with: Annotated[Optional[str], typer.Option("--rank-with", help="Rank the texts' candidates with this embedder instead of --ranked.")] = None,
    k: Annotated[str, typer.Option("--k", help="Cut-offs K, comma-separated.")] = "2,3,5",
    dataset: Annotated[str, typer.Option("--dataset", help="msmarco, arxiv, hotpotqa-p, hotpotqa-s, nq or all.")] = "all",
    repeats: Annotated[int, typer.Option("--repeats", help="Judge each answer N times.")] = 1,
    second_judge: Annotated[Optional[str], typer.Option("--second-judge", help="Another judge model, for agreement between judges.")] = None,
    segments: Annotated[str, typer.Option("--segments", help="Correlation segments: ratio or nw.")] = "ratio",
    min_samples: Annotated[int, typer.Option("--min-samples", help="Drop correlation segments with fewer rows (paper: 300).")] = 300,
    model: o.Model = o.DEFAULTS["model"],
    base_url: o.BaseUrl = None,
    cache_dir: o.CacheDir = None,
    cache: o.CacheMode = o.DEFAULTS["cache"],
    workers: o.Workers = o.DEFAULTS["workers"],
    seed: o.Seed = o.DEFAULTS["seed"],
    temperature: o.Temperature = o.DEFAULTS["temperature"],
    max_retries: o.MaxRetries = o.DEFAULTS["max_retries"],
    rpm: o.Rpm = None,
    tpm: o.Tpm = None,
    prices: o.Prices = None,
    min_coverage: o.MinCoverage = o.DEFAULTS["min_coverage"],
    progress: o.Progress = True,
) -> None:
    """Generate answers, grade them and correlate retrieval measures with the grades."""
    from ragdiag.pipeline.generate import parse_ks
    from ragdiag.pipeline.pipeline import run_pipeline
    from ragdiag.pipeline.run_meta import check_coverage

    config = o.client_config(model, base_url, cache_dir, cache, workers, seed, temperature, max_retries, rpm, tpm, prices)
    judges = [model] + ([second_judge] if second_judge else [])
    result = run_pipeline(texts, ranked, rank_with, parse_ks(k), dataset, out_dir, config, repeats, judges, segments,
                          min_samples, progress)
    o.render_summary("generate", result.generated.summary, {"answers": result.paths["answers"]})
    o.render_summary("grade", result.graded.summary, {"graded": result.paths["graded"]})
    from rich.console import Console

    from ragdiag.report.correlate_report import print_report

    print_report(result.correlation, Console(width=max(Console().width, 120)))
    typer.echo(f"correlation written to {result.paths['correlation']} "
               f"(same as: {result.correlation['meta']['pipeline']['equivalent_command']})")
    check_coverage(result.graded.summary, min_coverage, result.graded.manifest)
