"""Shared bookkeeping for LLM runs: the ``meta`` block, the summary, the coverage gate, JSONL output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import LLMClient


class CoverageError(RagdiagError):
    """The run finished and wrote its files, but covered less than ``--min-coverage`` of its items."""

    exit_code = 3


def run_meta(command: str, client: LLMClient, **details: Any) -> dict[str, Any]:
    """The ``meta`` block of a result: what determines its content (command, version, provider, model,
    sampling parameters, prompt versions, inputs), and nothing that changes between identical reruns."""
    cfg = client.config
    llm = {"provider": cfg.provider, "model": cfg.model, "temperature": cfg.temperature, "seed": cfg.seed}
    return {"command": command, "ragdiag_version": __version__, "llm": llm, **details}


def run_details(client: LLMClient) -> dict[str, Any]:
    """How this particular run reached the server (kept in the manifest, not in the result)."""
    cfg = client.config
    return {"base_url": cfg.base_url, "cache": cfg.cache, "workers": cfg.workers, "max_retries": cfg.max_retries,
            "rpm": cfg.rpm, "tpm": cfg.tpm}


def summary(client: LLMClient, items: int, covered: int, seconds: float, **extra: Any) -> dict[str, Any]:
    """Calls, cache hits, retries, failures, tokens, cost and coverage = covered / items."""
    return {"items": items, "covered": covered, "coverage": covered / items if items else 1.0,
            "seconds": round(seconds, 3), **client.stats.as_dict(), **extra}


def check_coverage(result_summary: dict[str, Any], min_coverage: float, manifest: Path) -> None:
    """Raise :class:`CoverageError` when coverage is below ``min_coverage``."""
    if result_summary["coverage"] < min_coverage:
        raise CoverageError(
            f"coverage {result_summary['coverage']:.3f} ({result_summary['covered']} of {result_summary['items']} items) "
            f"is below --min-coverage {min_coverage}; failed and unparseable items are listed in {manifest}"
        )


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def manifest_path(out: Path) -> Path:
    """``answers.jsonl`` → ``answers.manifest.json``: meta, summary and the failure manifest."""
    return out.with_name(out.name.split(".")[0] + ".manifest.json")
