"""Shared bookkeeping for LLM runs: the ``meta`` block, the run record, the summary, the coverage
gate, and the manifest beside each output (``graded.json`` → ``graded.json.manifest.json``).

Every file goes through :mod:`ragdiag.io.writer` (atomic, never over an input).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.io.json_record import JsonRecord
from ragdiag.io.run_record import RUN_RECORD_KEY, RunRecord, stamp, start_run
from ragdiag.io.writer import (
    OutputError,
    PathLike,
    guard_outputs,
    sidecar_path,
    write_json,
)
from ragdiag.llm.client import CallStats, ClientConfig, LLMClient
from ragdiag.remote.urls import redact_url


class CoverageError(RagdiagError):
    """The run finished and wrote its files, but covered less than ``--min-coverage`` of its items."""

    exit_code = 3


def run_meta(command: str, client: LLMClient, **details: Any) -> dict[str, Any]:
    """The ``meta`` block of a result: what determines its content (command, version, provider, model,
    sampling parameters, prompt versions, inputs), and nothing that changes between identical reruns."""
    cfg = client.config
    from ragdiag.llm.output_limit import limit_param

    llm = {"provider": getattr(client, "provider", cfg.provider), "model": cfg.model, "temperature": cfg.temperature,
           "seed": cfg.seed, "output_limit_param": limit_param(cfg.provider)}
    return {"command": command, "ragdiag_version": __version__, "llm": llm, **details}


def run_details(client: LLMClient) -> dict[str, Any]:
    """How this particular run reached the server (kept in the manifest, not in the result)."""
    cfg = client.config
    return {"base_url": redact_url(cfg.base_url), "cache": cfg.cache,
            "workers": cfg.workers, "max_retries": cfg.max_retries, "rpm": cfg.rpm, "tpm": cfg.tpm,
            **({"batch": cfg.batch, "batch_dir": str(client.batch.folder.path)} if client.batch is not None else {}),
            **({"engine": "ray", "ray_workers": client.ray.settings.ray_workers,
                "llm_backend": client.ray.settings.llm_backend} if getattr(client, "ray", None) is not None else {}),
            **({"concurrency": adapted} if (adapted := client.in_flight.report()) else {})}


def open_record(command: str, config: ClientConfig, inputs: Iterable[PathLike | str | None],
                prompts: dict[str, str], models: list[str] | None = None) -> RunRecord:
    """The run record of an LLM command: inputs hashed, models, prompt versions, seed, cache mode."""
    seeds = {"llm": config.seed} if config.seed is not None else {}
    local = [p for p in inputs if p is not None and not str(p).startswith("hf:")]
    return start_run(f"ragdiag {command}", inputs=local, models={"llm": models or [config.model]},
                     prompts=prompts, seeds=seeds, cache=config.cache)


def summary(client: LLMClient, items: int, covered: int, seconds: float, **extra: Any) -> dict[str, Any]:
    """Calls, cache hits, retries, failures, tokens, cost and coverage = covered / items."""
    return {"items": items, "covered": covered, "coverage": covered / items if items else 1.0,
            "seconds": round(seconds, 3), **client.stats.as_dict(), **extra}


@dataclass
class RunMeta(JsonRecord):
    """The ``meta`` block of a generate or grade result (:func:`run_meta`): command, version, the
    model and its sampling parameters, prompt versions, then what the command adds (``k``, ``dataset``,
    the inputs for generate; ``judges``, ``repeats``, ``grade_mode``, the answers for grade)."""

    command: str | None = None
    ragdiag_version: str | None = None
    llm: dict[str, Any] = field(default_factory=dict)
    prompts: list[str] = field(default_factory=list)
    k: list[int] | None = None
    dataset: str | None = None
    judges: list[str] | None = None
    repeats: int | None = None
    grade_mode: str | None = None
    lang: str | None = None


@dataclass
class RunSummary(JsonRecord):
    """The ``summary`` of an LLM run (generate, grade, label, sweep): coverage = covered / items, the
    call counts (``stats``, a :class:`ragdiag.llm.client.CallStats`, flat in the file), then what the
    command adds."""

    items: int = 0
    covered: int = 0
    coverage: float = 1.0
    seconds: float = 0.0
    stats: CallStats = field(default_factory=CallStats)
    skipped: dict[str, Any] | None = None
    missing_grades: int | None = None
    no_answer: int | None = None
    retried_unparsed: int | None = None
    agreement: dict[str, Any] | None = None
    reference_gate: dict[str, Any] | None = None
    coverage_by_K: dict[str, Any] | None = None
    coverage_by_point: list[dict[str, Any]] | None = None
    lang: dict[str, Any] | None = None
    references_cut: int | None = None
    context_exceeded: int | None = None
    context_refits: int | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RunSummary:
        names = set(cls.named()) - {"stats"}
        return cls(**{k: v for k, v in doc.items() if k in names},
                   stats=CallStats(**{k: v for k, v in doc.items() if k in _COUNTED}),
                   extra={k: v for k, v in doc.items() if k not in names | _COUNTED}, present=tuple(doc))

    def field_value(self, key: str) -> Any:
        return getattr(self.stats if key in _COUNTED else self, key)


_COUNTED = frozenset(f.name for f in fields(CallStats))


def as_summary(result_summary: RunSummary | Mapping[str, Any]) -> RunSummary:
    """A :class:`RunSummary` from one, or from a summary dict (label and sweep keep dicts)."""
    return result_summary if isinstance(result_summary, RunSummary) else RunSummary.from_json(result_summary)


def check_coverage(result_summary: RunSummary | Mapping[str, Any], min_coverage: float, manifest: Path) -> None:
    """Raise :class:`CoverageError` when coverage is below ``min_coverage``."""
    done = as_summary(result_summary)
    if done.coverage < min_coverage:
        raise CoverageError(
            f"coverage {done.coverage:.3f} ({done.covered} of {done.items} items) "
            f"is below --min-coverage {min_coverage}; failed and unparseable items are listed in {manifest}"
        )


def manifest_path(out: PathLike) -> Path:
    """``answers.jsonl`` → ``answers.jsonl.manifest.json``: named from the whole output name."""
    return sidecar_path(out, "manifest")


def guard_run_outputs(outputs: list[PathLike | None], inputs: list[PathLike | str | None]) -> Path:
    """Before any work: refuse outputs (and the first output's manifest) that are inputs or coincide;
    return the manifest path."""
    manifest = manifest_path(outputs[0])
    paths = [p for p in inputs if p is not None and not str(p).startswith("hf:")]
    for src in paths:
        if Path(src).resolve() == manifest.resolve():
            raise OutputError(f"the manifest {manifest} of output {outputs[0]} would overwrite the input {src}; "
                              "choose another output name")
    guard_outputs([*outputs, manifest], paths)
    return manifest


@dataclass
class RunManifest:
    """The manifest beside a generate or grade output (``OUT.manifest.json``): ``meta`` (what
    determines the result), ``run`` (how the server was reached), ``summary``, ``failures``, then
    ``skipped`` (generate) or ``unparsed`` (grade), and the run record."""

    meta: RunMeta
    run: dict[str, Any]
    summary: RunSummary
    failures: list[dict[str, Any]]
    skipped: dict[str, Any] | None = None
    unparsed: list[dict[str, Any]] | None = None
    run_record: dict[str, Any] | None = None

    @property
    def command(self) -> str | None:
        return self.meta.command or (self.run_record or {}).get("command")

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RunManifest:
        return cls(meta=RunMeta.from_json(doc.get("meta") or {}), run=doc.get("run") or {},
                   summary=RunSummary.from_json(doc.get("summary") or {}), failures=doc.get("failures") or [],
                   skipped=doc.get("skipped"), unparsed=doc.get("unparsed"), run_record=doc.get("run_record"))

    def sections(self) -> dict[str, Any]:
        """The manifest without its run record."""
        doc = {"meta": self.meta.to_json(), "run": self.run, "summary": self.summary.to_json(), "failures": self.failures}
        if self.skipped is not None:
            doc["skipped"] = self.skipped
        if self.unparsed is not None:
            doc["unparsed"] = self.unparsed
        return doc

    def to_json(self) -> dict[str, Any]:
        doc = self.sections()
        return {**doc, "run_record": self.run_record} if self.run_record is not None else doc


@dataclass
class LLMRunResult:
    """What a generate or grade run returns: its manifest (also written at ``manifest_path``)."""

    manifest: RunManifest
    manifest_path: Path

    @property
    def meta(self) -> RunMeta:
        return self.manifest.meta

    @property
    def summary(self) -> RunSummary:
        return self.manifest.summary

    @property
    def failures(self) -> list[dict[str, Any]]:
        return self.manifest.failures


def write_manifest(manifest: Path, record: RunRecord, inputs: list[PathLike | str | None],
                   **sections: Any) -> Path:
    """The manifest (meta, run, summary, failures …) stamped with the run record (label's)."""
    paths = [p for p in inputs if p is not None and not str(p).startswith("hf:")]
    return write_json(manifest, stamp(dict(sections), record), inputs=paths)


def write_run_manifest(path: Path, record: RunRecord, inputs: list[PathLike | str | None],
                       manifest: RunManifest) -> RunManifest:
    """Write a generate/grade manifest stamped with the run record; returns it, record included."""
    paths = [p for p in inputs if p is not None and not str(p).startswith("hf:")]
    doc = stamp(manifest.sections(), record)
    write_json(path, doc, inputs=paths)
    manifest.run_record = doc[RUN_RECORD_KEY]
    return manifest
