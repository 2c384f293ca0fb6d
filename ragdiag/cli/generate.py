"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import llm_options as o


def generate(
    texts: Annotated[str, typer.Option("--texts", help="Texts samples: JSON/JSONL file, hub-layout directory, or hf:[REPO].")],
    out: Annotated[Path, typer.Option("--out", help="Answers file (JSON lines).")],
    ranked: Annotated[Optional[str], typer.Option("--ranked", help="Ranked samples: file, directory or hf:[REPO].")] = None,
    k: Annotated[str, typer.Option("--k", help="Cut-offs K, comma-separated.")] = "2,3,5",
    dataset: Annotated[str, typer.Option("--dataset", help="msmarco, arxiv, hotpotqa-p, hotpotqa-s, nq or all.")] = "all",
    rank_with: Annotated[Optional[str], typer.Option("--rank-with", help="Rank the texts' candidates with this embedder instead of --ranked.")] = None,
    ranked_out: Annotated[Optional[Path], typer.Option("--ranked-out", help="Where --rank-with writes ranked samples (default OUT-stem.ranked.json).")] = None,
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
    """Write one ideal answer per query and one top-K answer per (ranked sample, K)."""
    from ragdiag.pipeline.generate import parse_ks, run_generate
    from ragdiag.pipeline.run_meta import check_coverage

    config = o.client_config(model, base_url, cache_dir, cache, workers, seed, temperature, max_retries, rpm, tpm, prices)
    result = run_generate(texts, ranked, parse_ks(k), dataset, out, config, rank_with, ranked_out, progress)
    o.render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
