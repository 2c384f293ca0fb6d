"""Tamper with one field of a result document, for the report's wrong-shape tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragdiag.cli import app


def set_field(doc: Any, path: list, value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced by ``value`` (deleted when ``value`` is ``KeyError``)."""
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


def assert_report_refuses(doc: Any, path: list, value: Any, needle: str, bad: Path) -> None:
    """``ragdiag report`` on ``doc`` with one field tampered (written to ``bad``) ends in one error line
    naming the file and ``needle``, exit 2, no page written and the input untouched."""
    bad.write_text(json.dumps(set_field(doc, path, value)))
    data = bad.read_bytes()
    out = bad.parent / "r.html"
    result = CliRunner().invoke(app, ["report", str(bad), "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"ragdiag: error: {bad}: a ") and needle in result.stderr, result.stderr
    assert "Traceback" not in result.output and not out.exists() and bad.read_bytes() == data
