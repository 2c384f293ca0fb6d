"""``ragdiag noise`` (also ``ragdiag probe noise``): conversational-noise sensitivity of embedders (docs/methods.md#7-noise-probe)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p
from ragdiag.cli.engine_options import engine_command


@engine_command
def noise(
    lang: p.Lang = "en",
    embedder: p.Embedders = [p.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    levels: Annotated[str, p.text_option("--levels", "Noise levels: a range (0-4) or a list (0,2,4).")] = "0-4",
    queries: Annotated[str, p.text_option("--queries", "bundled, or a JSONL file of {query, reference} (or BEIR queries: _id, text).")] = "bundled",
    seed: p.Seed = p.DEFAULT_SEED,
    variants: p.Variants = 3,
    corpus: p.retold(p.Corpus, "BEIR folder or corpus.jsonl: retrieval impact.", kind=Optional[Path]) = None,
    k: p.K = p.DEFAULT_K,
    fmt: p.TableFormatOpt = None,
    out: p.TableJsonOut = None,
    quiet: p.Quiet = False,
    plot: p.Plot = None,
    cache_dir: p.CacheDir = None,
    cache: p.Cache = p.DEFAULT_CACHE_MODE,
    rewrite: Annotated[bool, typer.Option("--rewrite", help="Also rewrite queries with an LLM and report recovery.")] = False,
    model: p.retold(p.Model, f"LLM for --rewrite (default: {p.DEFAULT_MODEL}).", kind=Optional[str]) = None,
    base_url: p.BaseUrl = None,
    qrels: p.retold(p.Qrels, "With --corpus and BEIR queries: graded qrels 1–5; per level the change in N-Recall4+@K, RA-nWG@K and recall@K of the noisy queries against the clean ones, with paired bootstrap intervals and the queries that lose the most.") = None,
    bootstrap: p.Bootstrap = 1000,
) -> None:
    """Cosine to the clean query and to its reference passage as conversational noise grows."""
    from ragdiag.commands.probe import NoiseRequest, run
    from ragdiag.report.probe_output import print_probe_output

    fmt_value = fmt.value if fmt else None
    result = run(NoiseRequest(lang, tuple(embedder), levels, queries, seed, variants, corpus, k, fmt_value, out, plot,
                              cache_dir, cache.value, rewrite, model, base_url, qrels, bootstrap))
    print_probe_output(result, fmt_value, out is not None, quiet)
