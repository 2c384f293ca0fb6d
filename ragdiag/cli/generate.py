"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o
from ragdiag.io.lists import parse_ks
from ragdiag.report.llm_summary import render_summary


def generate(
    texts: o.Texts,
    out: Annotated[Path, o.retold(o.OutRequired, "Answers file (JSON lines); its manifest is OUT.manifest.json.")],
    ranked: o.Ranked = None,
    ks: o.Ks = o.DEFAULT_KS,
    dataset: o.DatasetOpt = o.Dataset.all,
    embedder: o.RankEmbedder = None,
    ranked_out: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--ranked-out", "Where --embedder writes the ranked samples (default OUT-stem.ranked.json).")] = None,
    degenerate_patterns: o.DegeneratePatterns = None,
    long_answer_ratio: o.LongAnswerRatio = o.DEFAULT_LONG_ANSWER_RATIO,
    client: o.ClientGroup = o.CLIENT,
    answer: o.AnswerGroup = o.ANSWER,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Write one ideal answer per query and one top-K answer per (ranked sample, K); count degenerate answers
    (empty, refusal, prompt echo, question copy, too long) per kind."""
    config = client.config()
    settings = answer.settings()
    with o.llm_run(client, engine):
        from ragdiag.commands import generate as command

        request = command.GenerateRequest(
            texts=texts, out=out, config=config, ks=tuple(sorted(parse_ks(ks, "--ks"))), ranked=ranked,
            dataset=dataset.value, embedder=embedder, ranked_out=ranked_out, degenerate_patterns=degenerate_patterns,
            long_answer_ratio=long_answer_ratio, answer=settings, progress=client.progress)
        result = command.run(request)
        render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest_path})
        command.check_coverage(result.summary, client.min_coverage, result.manifest_path)
