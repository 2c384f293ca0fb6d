"""``ragdiag probe names``: the Δ-margin proper-name probe (METHODS.md §6)."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Embedding probes: proper-name sensitivity (Δ-margins).", no_args_is_help=True)


def show(output) -> None:
    """Print tables or JSON to stdout and notes (call counters, written files) to stderr."""
    import sys

    from rich.console import Console

    if output.json_text is not None:
        typer.echo(output.json_text)
    console = Console() if sys.stdout.isatty() else Console(width=140)
    for table in output.tables:
        console.print(table)
    for note in output.notes:
        typer.echo(note, err=True)


@app.command("names")
def names(
    lang: str = typer.Option("en", "--lang", help="en, fr or en,fr."),
    embedder: list[str] = typer.Option(["local"], "--embedder", help="Embedder spec; repeat to compare."),
    queries: int = typer.Option(30, "--queries", help="Queries (bundles) per language."),
    runs: int = typer.Option(15, "--runs", help="Runs with fresh impostors and template jitter."),
    seed: int = typer.Option(0, "--seed", help="Random seed (names, topics, impostors, templates)."),
    ablations: str = typer.Option("all", "--ablations", help="all or a comma list of ablation names."),
    epsilon: float = typer.Option(0.01, "--epsilon", help="Exclude queries with |base Δ_name| < ε from % change."),
    fmt: str = typer.Option("table", "--format", help="table or json."),
    out: Path | None = typer.Option(None, "--out", help="Write the table or JSON here instead of stdout."),
    plot: Path | None = typer.Option(None, "--plot", help="Write a PNG bar chart here."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Embedding cache directory."),
) -> None:
    """Δ_name and Δ_topic margins under ten name ablations, EN and FR, on any embedder."""
    from ragdiag.probes.commands import probe_names

    show(probe_names(lang, embedder, queries, runs, seed, ablations, epsilon, fmt, out, plot, cache_dir))
