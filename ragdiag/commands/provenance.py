"""What the inputs of a result say about where its numbers come from, read for the renderers' loud
lines (:mod:`ragdiag.report.provenance`): the manifest beside a graded file (which judge, a test
server?) and rows that say ``"simulated_grades": true``. The renderers open no file; the commands
(and the command line, for what it prints after a run) read these here and pass them in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def sidecar_manifests(graded: str | Path | None) -> list[Any]:
    """The parsed manifests beside ``graded`` (``NAME.manifest.json``, then the older
    ``STEM.manifest.json``) that exist and hold JSON; none for no path or an unreadable file."""
    if graded is None or not str(graded):
        return []
    path = Path(graded)
    try:
        candidates = (path.with_name(f"{path.name}.manifest.json"), path.with_name(f"{path.stem}.manifest.json"))
    except ValueError:  # a path with no file name
        return []
    docs = []
    for manifest in candidates:
        try:
            if manifest.is_file():
                docs.append(json.loads(manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return docs


def simulated_rows(path: str | Path | None) -> bool:
    """Whether a JSON / JSON-lines file of rows says ``"simulated_grades": true`` in every row
    (``tools/judge_noise_demo.py`` writes such files); False for anything else or unreadable."""
    from ragdiag.io.jsonl import read_json_records

    if path is None or Path(path).suffix.lower() not in (".json", ".jsonl") or not Path(path).is_file():
        return False
    try:
        rows = read_json_records(Path(path))
    except Exception:  # the command itself reports a bad file
        return False
    return isinstance(rows, list) and bool(rows) and all(isinstance(r, dict) and r.get("simulated_grades") is True
                                                         for r in rows)
