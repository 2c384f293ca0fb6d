"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.errors import RagdiagError

if TYPE_CHECKING:
    from ragdiag.llm.client import ClientConfig


def check_ranking_source(ranked: Optional[str], embedder: Optional[str]) -> None:
    """Exactly one of --ranked and --embedder says where the top-K comes from."""
    if (ranked is None) == (embedder is None):
        raise RagdiagError("give exactly one of --ranked FILE or --embedder EMBEDDER")


@llm_command
def generate(
    texts: p.Texts,
    out: Annotated[Path, p.path_option("--out", "Answers file (JSON lines); its manifest is OUT.manifest.json.")],
    ranked: p.Ranked = None,
    ks: p.Ks = p.DEFAULT_KS,
    dataset: p.DatasetOpt = p.Dataset.all,
    embedder: p.RankEmbedder = None,
    ranked_out: Annotated[Optional[Path], p.path_option("--ranked-out", "Where --embedder writes the ranked samples (default OUT-stem.ranked.json).")] = None,
    degenerate_patterns: p.DegeneratePatterns = None,
    long_answer_ratio: p.LongAnswerRatio = p.DEFAULT_LONG_ANSWER_RATIO,
    lang: ao.AnswerLang = ao.DEFAULT_LANG,
    max_prompt_tokens: ao.MaxPromptTokens = None,
    fit: ao.Fit = ao.DEFAULT_FIT,
    tokenizer: ao.Tokenizer = None,
    chars_per_token: ao.CharsPerToken = ao.DEFAULT_CHARS_PER_TOKEN,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Write one ideal answer per query and one top-K answer per (ranked sample, K); count degenerate answers
    (empty, refusal, prompt echo, question copy, too long) per kind."""
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.io.lists import parse_ks
    from ragdiag.io.paths import check_paths
    from ragdiag.pipeline.generate import run_generate
    from ragdiag.pipeline.run_meta import check_coverage

    check_ranking_source(ranked, embedder)
    settings = ao.answer_settings(lang, max_prompt_tokens, fit, tokenizer, chars_per_token)
    local = {"--texts": texts, "--ranked": ranked, "--degenerate-patterns": degenerate_patterns}
    check_paths(inputs={flag: Path(v) for flag, v in local.items() if v and Path(v).exists()},
                outputs={"--out": out, "--ranked-out": ranked_out}, folders={"--cache-dir": config.cache_dir})
    gate = make_gate(degenerate_patterns, long_answer_ratio)
    result = run_generate(texts, ranked, sorted(parse_ks(ks, "--ks")), dataset.value, out, config, embedder, ranked_out, progress,
                          gate=gate, settings=settings)
    render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest})
    check_coverage(result.summary, min_coverage, result.manifest)
