"""The result types of LLM runs (``meta`` block, summary, the manifest beside each output:
``graded.json`` → ``graded.json.manifest.json``) and the coverage gate. Built by
:mod:`ragdiag.answers.run_stats`; written and stamped by ``commands/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.io.json_record import JsonRecord
from ragdiag.llm.client import CallStats


class CoverageError(RagdiagError):
    """The run finished and wrote its files, but covered less than ``--min-coverage`` of its items."""

    exit_code = 3


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
