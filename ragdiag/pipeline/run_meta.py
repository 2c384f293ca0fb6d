"""The result types of LLM runs (``meta`` block, summary, the manifest beside each output:
``graded.json`` → ``graded.json.manifest.json``) and the coverage gate. Built by
:mod:`ragdiag.answers.run_stats`; written and stamped by ``commands/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.results.llm_run import RunManifest, RunMeta, RunSummary, as_summary


class CoverageError(RagdiagError):
    """The run finished and wrote its files, but covered less than ``--min-coverage`` of its items."""

    exit_code = 3

def check_coverage(result_summary: RunSummary | Mapping[str, Any], min_coverage: float, manifest: Path) -> None:
    """Raise :class:`CoverageError` when coverage is below ``min_coverage``."""
    done = as_summary(result_summary)
    if done.coverage < min_coverage:
        raise CoverageError(
            f"coverage {done.coverage:.3f} ({done.covered} of {done.items} items) "
            f"is below --min-coverage {min_coverage}; failed and unparseable items are listed in {manifest}"
        )

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
