"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.llm.client import ClientConfig

Texts = Annotated[str, typer.Option("--texts", help="Texts samples: JSON/JSONL file, hub-layout directory, or hf:[REPO].")]
Ranked = Annotated[Optional[str], typer.Option("--ranked", help="Ranked samples: file, directory or hf:[REPO].")]
Ks = Annotated[str, typer.Option("--k", help="Cut-offs K, comma-separated.")]
Dataset = Annotated[str, typer.Option("--dataset", help="msmarco, arxiv, hotpotqa-p, hotpotqa-s, nq or all.")]
RankWith = Annotated[Optional[str], typer.Option("--rank-with", help="Rank the texts' candidates with this embedder instead of --ranked.")]


@llm_command
def generate(
    texts: Texts,
    out: Annotated[Path, typer.Option("--out", help="Answers file (JSON lines).")],
    ranked: Ranked = None,
    k: Ks = "2,3,5",
    dataset: Dataset = "all",
    rank_with: RankWith = None,
    ranked_out: Annotated[Optional[Path], typer.Option("--ranked-out", help="Where --rank-with writes ranked samples (default OUT-stem.ranked.json).")] = None,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Write one ideal answer per query and one top-K answer per (ranked sample, K)."""
    from ragdiag.pipeline.generate import parse_ks, run_generate
    from ragdiag.pipeline.run_meta import check_coverage

    result = run_generate(texts, ranked, parse_ks(k), dataset, out, config, rank_with, ranked_out, progress)
    render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
