"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached).

:func:`run` checks the ranking source, the prompt settings, every input and output path and the
reference gate before any call, reads the texts and ranked samples (or ranks the texts with an
embedder), answers them (:func:`ragdiag.answers.runs.generate`), then writes the answers JSONL, its
manifest and, with an embedder, the ranked samples through :mod:`ragdiag.io.writer`, the manifest
stamped with the run record. ``pipeline`` calls :func:`load_samples`, :func:`write_answers` and
:func:`manifest_of` with samples it holds in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.generation import Row, Skipped
from ragdiag.answers.plan import AnswerSettings
from ragdiag.answers.runs import Answered, Samples, generate
from ragdiag.commands.llm_files import (
    Written,
    guard_run_outputs,
    json_bytes,
    jsonl_bytes,
    open_record,
    stderr_notice,
    write_held,
    write_run_manifest,
)
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.io.run_record import RunRecord
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.run_meta import LLMRunResult, check_coverage
from ragdiag.results.llm_run import RunDetails, RunManifest, RunMeta, RunSummary, skip_counts

__all__ = ["AnswerSettings", "ClientConfig", "GenerateRequest", "GenerateResult", "RunManifest", "RunMeta", "RunSummary",
           "check_coverage", "check_ranking_source", "run"]


@dataclass
class GenerateResult(LLMRunResult):
    """Answers written to the answers file (the manifest: meta, summary, failures, skipped)."""

    rows: list[Row] = field(default_factory=list)
    written: Written | None = None  # the answers file, described from the bytes written


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


def check_ranking_source(ranked: str | None, embedder: str | None) -> None:
    """Exactly one of --ranked and --embedder says where the top-K comes from."""
    if (ranked is None) == (embedder is None):
        raise RagdiagError("give exactly one of --ranked FILE or --embedder EMBEDDER")


def load_samples(texts: Loaded[TextsSample], ranked: Loaded[RankedSample]) -> Samples:
    """The ranked samples that have a texts sample (the others reported as skipped), with the meta's inputs."""
    by_id = {s.id: s for s in texts.samples}
    kept = [r for r in ranked.samples if r.id in by_id]
    if not kept:
        raise RagdiagError(f"{ranked.source}: no ranked sample has a texts sample in {texts.source}")
    skipped = Skipped(ranked_without_texts=[r.id for r in ranked.samples if r.id not in by_id])
    inputs = {"texts": {"source": texts.source, "sha256": texts.sha256},
              "ranked": {"source": ranked.source, "sha256": ranked.sha256}}
    return Samples(by_id, kept, ranked.source, texts.source, inputs, skipped)


def manifest_of(answered: Answered) -> RunManifest:
    """The manifest's sections (meta, run, summary, failures, skipped); the run record is added when written."""
    return RunManifest(meta=answered.meta, run=RunDetails.from_json(dict(answered.details)), summary=answered.summary,
                       failures=answered.failures, skipped=skip_counts(answered.skipped))


def write_answers(out: Path, manifest: Path, answered: Answered, record: RunRecord,
                  inputs: list[Any]) -> GenerateResult:
    """The answers JSONL (meta line first) and its manifest stamped with ``record``."""
    record.prompts = dict(answered.prompts)  # the versions the rows were asked with, and the gate's patterns
    written = write_held(out, jsonl_bytes([{"kind": "meta", "meta": answered.meta.to_json()}, *answered.rows]), inputs)
    document = write_run_manifest(manifest, record, inputs, manifest_of(answered))
    return GenerateResult(document, manifest, rows=answered.rows, written=written)


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


def rank_with(texts: Loaded[TextsSample], texts_input: str, embedder: str, ks: list[int], ranked_out: Path,
              config: ClientConfig, progress: bool) -> tuple[Loaded[RankedSample], Written]:
    """Rank each texts sample's candidates with ``embedder``; write the ranked samples (kept in memory)."""
    from ragdiag.pipeline.rank import rank_texts

    ranked = rank_texts(texts.samples, embedder, ks, config.cache_dir, progress)
    held = write_held(ranked_out, json_bytes([r.to_json() for r in ranked]), [texts_input])
    return Loaded(ranked, str(ranked_out), held.sha256), held
