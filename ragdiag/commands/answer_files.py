"""The answers and graded files that ``generate``, ``grade`` and ``pipeline`` share: which ranked
samples are answered, the answers JSONL and the graded table with their manifests, and ranking texts
with an embedder. Each writes through :mod:`ragdiag.commands.llm_files` (the one writer underneath),
so ``pipeline`` passes what it holds in memory without calling another command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.generation import Row, Skipped
from ragdiag.answers.runs import Answered, Graded, Samples
from ragdiag.commands.llm_files import Written, json_bytes, jsonl_bytes, open_record, write_held, write_run_manifest
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.io.run_record import RunRecord
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.run_meta import LLMRunResult
from ragdiag.results.llm_run import RunDetails, RunManifest, skip_counts


@dataclass
class GenerateResult(LLMRunResult):
    """Answers written to the answers file (the manifest: meta, summary, failures, skipped)."""

    rows: list[Row] = field(default_factory=list)
    written: Written | None = None  # the answers file, described from the bytes written


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


def rank_with(texts: Loaded[TextsSample], texts_input: str, embedder: str, ks: list[int], ranked_out: Path,
              config: ClientConfig, progress: bool) -> tuple[Loaded[RankedSample], Written]:
    """Rank each texts sample's candidates with ``embedder``; write the ranked samples (kept in memory)."""
    from ragdiag.pipeline.rank import rank_texts

    ranked = rank_texts(texts.samples, embedder, ks, config.cache_dir, progress)
    held = write_held(ranked_out, json_bytes([r.to_json() for r in ranked]), [texts_input])
    return Loaded(ranked, str(ranked_out), held.sha256), held


@dataclass
class GradeResult(LLMRunResult):
    """Graded rows written to the output (the manifest: meta, summary, failures, unparsed)."""

    graded: list[Row] = field(default_factory=list)

    @property
    def unparsed(self) -> list[dict[str, Any]]:
        return self.manifest.unparsed or []


def grade_record(config: ClientConfig, prompts: dict[str, str], judges: list[str], gate_source: str,
                 inputs: list[Any], held: list[Any] | None = None) -> RunRecord:
    """The run record of a grade run: the answers file, the judges, the grading prompts and the gate's patterns."""
    record = open_record("grade", config, inputs, prompts, judges, held=held or ())
    record.prompts[gate_source.split("@")[0]] = gate_source
    return record


def write_graded(out: Path, manifest: Path, graded: Graded, record: RunRecord, inputs: list[Any]) -> GradeResult:
    """The graded table (JSON list, or Parquet for ``*.parquet``) and its manifest stamped with ``record``."""
    from ragdiag.data.graded_parquet import graded_arrow_table, is_parquet
    from ragdiag.io.writer import write_json, write_parquet

    if is_parquet(out):
        write_parquet(out, graded_arrow_table(graded.graded), inputs=inputs)
    else:
        write_json(out, graded.graded, inputs=inputs)
    document = write_run_manifest(manifest, record, inputs, RunManifest(
        meta=graded.meta, run=RunDetails.from_json(dict(graded.details)), summary=graded.summary, failures=graded.failures,
        unparsed=graded.unparsed))
    return GradeResult(document, manifest, graded=graded.graded)
