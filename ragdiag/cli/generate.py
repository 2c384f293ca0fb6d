"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.io.lists import parse_ks

if TYPE_CHECKING:
    from ragdiag.commands.generate import AnswerSettings, ClientConfig


@llm_command
def generate(
    texts: p.Texts,
    out: p.retold(p.OutRequired, "Answers file (JSON lines); its manifest is OUT.manifest.json."),
    ranked: p.Ranked = None,
    ks: p.Ks = p.DEFAULT_KS,
    dataset: p.DatasetOpt = p.Dataset.all,
    embedder: p.RankEmbedder = None,
    ranked_out: Annotated[Optional[Path], p.path_option("--ranked-out", "Where --embedder writes the ranked samples (default OUT-stem.ranked.json).")] = None,
    degenerate_patterns: p.DegeneratePatterns = None,
    long_answer_ratio: p.LongAnswerRatio = p.DEFAULT_LONG_ANSWER_RATIO,
    answer: AnswerSettings = ao.ANSWER,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Write one ideal answer per query and one top-K answer per (ranked sample, K); count degenerate answers
    (empty, refusal, prompt echo, question copy, too long) per kind."""
    from ragdiag.commands import generate as command

    request = command.GenerateRequest(
        texts=texts, out=out, config=config, ks=tuple(sorted(parse_ks(ks, "--ks"))), ranked=ranked,
        dataset=dataset.value, embedder=embedder, ranked_out=ranked_out, degenerate_patterns=degenerate_patterns,
        long_answer_ratio=long_answer_ratio, answer=answer, progress=progress)
    result = command.run(request)
    render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest_path})
    command.check_coverage(result.summary, min_coverage, result.manifest_path)
