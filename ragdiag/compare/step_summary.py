"""Where ``compare``'s Markdown summary goes: ``--summary-md``, and appended to ``$GITHUB_STEP_SUMMARY``
(GitHub's step summary collects every step's text), once when the two are one file. Computes the
(path, text) pairs; the command writes them through :mod:`ragdiag.io.writer`."""

from __future__ import annotations

import os
from pathlib import Path

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def step_summary_path() -> Path | None:
    """``$GITHUB_STEP_SUMMARY`` when set and not empty."""
    summary = os.environ.get(STEP_SUMMARY)
    return Path(summary) if summary else None


def summary_writes(text: str, summary_md: Path | None) -> list[tuple[Path, str]]:
    """The files to write and their whole new text: ``summary_md`` gets ``text``; the step summary gets its
    current text, a line break when it lacks one, then ``text``."""
    step = step_summary_path()
    writes = []
    if summary_md is not None and not (step is not None and step.resolve() == summary_md.resolve()):
        writes.append((summary_md, text))
    if step is not None:
        before = step.read_text(encoding="utf-8") if step.is_file() else ""
        writes.append((step, before + ("\n" if before and not before.endswith("\n") else "") + text))
    return writes
