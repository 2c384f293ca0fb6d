"""``ragdiag probe names|noise``: the Δ-margin proper-name probe (METHODS.md §6); noise is ``ragdiag noise``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p

app = typer.Typer(help="Embedding probes: proper-name sensitivity (Δ-margins) and conversational noise.",
                  no_args_is_help=True)


@app.command("names")
def names(
    lang: p.Lang = "en",
    embedder: p.Embedders = [p.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    n_queries: Annotated[int, p.int_option("--n-queries", "Queries (bundles) per language.", 1, 100_000)] = 30,
    runs: p.Runs = 15,
    seed: p.Seed = p.DEFAULT_SEED,
    ablations: Annotated[str, p.text_option("--ablations", "all or a comma list of ablation names.")] = "all",
    epsilon: p.Epsilon = 0.01,
    fmt: p.TableFormatOpt = None,
    out: Annotated[Optional[Path], p.path_option("--out", "Write the result here instead of stdout; its suffix picks the format (.json, .txt/.md = table; else JSON) unless --format is given.")] = None,
    plot: p.Plot = None,
    cache_dir: p.CacheDir = None,
    cache: p.Cache = p.DEFAULT_CACHE_MODE,
) -> None:
    """Δ_name and Δ_topic margins under ten name ablations, EN and FR, on any embedder."""
    from ragdiag.cli.paths import check_paths
    from ragdiag.report.probe_output import print_probe_output

    check_paths(outputs={"--out": out}, plots={"--plot": plot}, folders={"--cache-dir": cache_dir})
    from ragdiag.probes.commands import probe_names  # after the checks: it needs the probes extra

    print_probe_output(probe_names(lang, embedder, n_queries, runs, seed, ablations, epsilon, fmt.value if fmt else None, out, plot,
                                   cache_dir, cache_mode=cache.value))
