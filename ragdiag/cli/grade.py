"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import llm_options as o


def grade(
    answers: Annotated[Path, typer.Option("--answers", help="Answers file written by ragdiag generate.")],
    out: Annotated[Path, typer.Option("--out", help="Graded samples (JSON list, samples_graded schema).")],
    repeats: Annotated[int, typer.Option("--repeats", help="Judge each answer N times (distinct cache entries).")] = 1,
    second_judge: Annotated[Optional[str], typer.Option("--second-judge", help="Another judge model, for agreement between judges.")] = None,
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
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted."""
    from ragdiag.pipeline.grade import run_grade
    from ragdiag.pipeline.run_meta import check_coverage

    config = o.client_config(model, base_url, cache_dir, cache, workers, seed, temperature, max_retries, rpm, tpm, prices)
    judges = [model] + ([second_judge] if second_judge else [])
    result = run_grade(answers, out, config, repeats, judges, progress)
    o.render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
