"""Shared bookkeeping for LLM runs: the ``meta`` block, the run record, the summary, the coverage
gate, and the manifest beside each output (``graded.json`` → ``graded.json.manifest.json``).

Every file goes through :mod:`ragdiag.io.writer` (atomic, never over an input).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.io.run_record import RUN_RECORD_KEY, RunRecord, stamp, start_run
from ragdiag.io.writer import (
    OutputError,
    PathLike,
    guard_outputs,
    sidecar_path,
    write_json,
)
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.remote.urls import redact_url
from ragdiag.results.llm_run import RunManifest, RunMeta, RunSummary, as_summary


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
            "seconds": round(seconds, 3), **client.stats.to_json(), **extra}


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
