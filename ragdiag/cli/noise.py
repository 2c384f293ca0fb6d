"""``ragdiag noise``: conversational-noise sensitivity of embedders (METHODS.md §7)."""

from __future__ import annotations

from pathlib import Path

import typer

from ragdiag.cli.probe import show


def noise(
    lang: str = typer.Option("en", "--lang", help="en, fr or en,fr."),
    embedder: list[str] = typer.Option(["local"], "--embedder", help="Embedder spec; repeat to compare."),
    levels: str = typer.Option("0-4", "--levels", help="Noise levels: a range (0-4) or a list (0,2,4)."),
    queries: str = typer.Option("bundled", "--queries", help="bundled, or a JSONL file of {query, reference}."),
    seed: int = typer.Option(0, "--seed", help="Random seed for phrase choices."),
    variants: int = typer.Option(3, "--variants", help="Noisy variants per query and level."),
    corpus: Path | None = typer.Option(None, "--corpus", help="BEIR folder or corpus.jsonl: retrieval impact."),
    k: int = typer.Option(10, "--k", help="Top-K for the retrieval impact (with --corpus)."),
    fmt: str = typer.Option("table", "--format", help="table or json."),
    out: Path | None = typer.Option(None, "--out", help="Write the table or JSON here instead of stdout."),
    plot: Path | None = typer.Option(None, "--plot", help="Write a PNG line chart here."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Embedding and LLM cache directory."),
    rewrite: bool = typer.Option(False, "--rewrite", help="Also rewrite queries with an LLM and report recovery."),
    model: str | None = typer.Option(None, "--model", help="LLM for --rewrite (default gpt-4o-mini)."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server for --rewrite."),
) -> None:
    """Cosine to the clean query and to its reference passage as conversational noise grows."""
    from ragdiag.probes.commands import probe_noise

    show(probe_noise(lang, embedder, levels, queries, seed, variants, corpus, k, fmt, out, plot, cache_dir,
                     rewrite, model, base_url))
