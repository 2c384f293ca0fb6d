"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached).

:func:`run` checks the ranking source, the prompt settings, every input and output path and the
reference gate before any call, reads the texts and ranked samples (or ranks the texts with an
embedder), answers them (:func:`ragdiag.answers.runs.generate`), then writes the answers JSONL, its
manifest and, with an embedder, the ranked samples through :mod:`ragdiag.io.writer`, the manifest
stamped with the run record (the writing helpers it shares with ``pipeline``:
:mod:`ragdiag.commands.answer_files`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.plan import AnswerSettings
from ragdiag.answers.runs import generate
from ragdiag.commands.answer_files import (
    GenerateResult,
    check_ranking_source,
    load_samples,
    rank_with,
    write_answers,
)
from ragdiag.commands.llm_files import guard_run_outputs, open_record, stderr_notice
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.run_meta import check_coverage
from ragdiag.results.llm_run import RunManifest, RunMeta, RunSummary

__all__ = ["AnswerSettings", "ClientConfig", "GenerateRequest", "GenerateResult", "RunManifest", "RunMeta", "RunSummary",
           "check_coverage", "check_ranking_source", "run"]


@dataclass
class GenerateRequest:
    """Every option of ``generate``, parsed (``ks`` sorted)."""

    texts: str
    out: Path
    config: ClientConfig
    ks: tuple[int, ...]
    ranked: str | None = None
    dataset: str = "all"
    embedder: str | None = None
    ranked_out: Path | None = None
    degenerate_patterns: Path | None = None
    long_answer_ratio: float = 5.0
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    progress: bool = True


def run(request: GenerateRequest, notice: Callable[[str], None] | None = None) -> GenerateResult:
    """Check, read, generate, write the answers and their manifest, stamp; the result holds both."""
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
    from ragdiag.io.paths import check_paths

    check_ranking_source(request.ranked, request.embedder)
    local = {"--texts": request.texts, "--ranked": request.ranked, "--degenerate-patterns": request.degenerate_patterns}
    check_paths(inputs={flag: Path(v) for flag, v in local.items() if v and Path(v).exists()},
                outputs={"--out": request.out, "--ranked-out": request.ranked_out},
                folders={"--cache-dir": request.config.cache_dir})
    gate = make_gate(request.degenerate_patterns, request.long_answer_ratio)
    if request.embedder is not None:  # ranking comes first: its keys and the servers before it
        from ragdiag.remote.preflight import preflight

        preflight(embedders=[request.embedder], llm_base_url=request.config.base_url, cache_mode=request.config.cache)
    out, embedder = request.out, request.embedder
    ranked_out = (request.ranked_out or out.with_name(out.name.split(".")[0] + ".ranked.json")) if embedder else None
    inputs: list[Any] = [request.texts, request.ranked]
    manifest = guard_run_outputs([out, ranked_out], inputs)
    record = open_record("generate", request.config, inputs, request.answer.prompt_ids())
    texts = load_texts(request.texts, request.dataset)
    if embedder is not None:
        assert ranked_out is not None
        ranked, held = rank_with(texts, request.texts, embedder, list(request.ks), ranked_out, request.config,
                                 request.progress)
        samples = load_samples(texts, ranked)
        samples.inputs["ranked"] = {"ranked_with": embedder, "written_to": str(held.path)}
    else:
        assert request.ranked is not None
        samples = load_samples(texts, load_ranked(request.ranked, request.dataset))
    samples.ranked_source = str(request.ranked)
    answered = generate(samples, list(request.ks), request.dataset, request.config, gate, request.answer,
                        request.progress, notice or stderr_notice)
    return write_answers(out, manifest, answered, record, inputs)
