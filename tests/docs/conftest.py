"""The examples tests' clone-like folder and shared cache, and their summary: blocks run, skipped
(with their reasons) and passed, over the pages that ran in this session (each page's test records
its counts as a user property)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.docs import example_vectors
from tests.docs.examples import ROOT, environment
from tests.docs.warm_server import warm_ragdiag

# what a clone does not hold: tool caches (mypy's is tens of MB after `make lint`), build outputs
SKIP_TOP = {".git", ".venv", ".ruff_cache", ".pytest_cache", ".mypy_cache", ".hypothesis", "__pycache__", "site", "out",
            "dist", "build", ".ragdiag-cache"}


@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository's files (what a clone holds), with nothing beside it."""
    target = tmp_path_factory.mktemp("clone") / "ragdiag"
    target.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for entry in ROOT.iterdir():
        if entry.name in SKIP_TOP or entry.name.endswith(".egg-info"):
            continue
        if entry.is_dir():
            shutil.copytree(entry, target / entry.name, ignore=ignore)
        else:
            shutil.copy2(entry, target / entry.name)
    return target


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One embedding / LLM cache for every page of a session and both of its workers (a user's cache
    persists too); $RAGDIAG_EXAMPLES_CACHE keeps one across sessions (cached vectors do not change
    results; the LLM calls' keys hold each test server's URL, a port of its own). It starts with the
    bundled model's vectors of the texts the examples embed (tests/docs/example_vectors.py), unless
    ``RAGDIAG_EXAMPLES_VECTORS=off``: then the examples embed every text with the model."""
    given = os.environ.get("RAGDIAG_EXAMPLES_CACHE")
    folder = Path(given) if given else shared_folder(tmp_path_factory, "ragdiag-cache")
    if os.environ.get("RAGDIAG_EXAMPLES_VECTORS") != "off":
        example_vectors.seed(folder)
    return folder


def shared_folder(tmp_path_factory, name: str) -> Path:
    """A folder of this session shared by all its xdist workers (the folder their own temporary folders
    are in), so that a bundled set embedded by one worker's page is read from the cache by the other
    worker's pages (the cache is SQLite in WAL mode: safe for several processes); without xdist, a
    folder of this session."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return tmp_path_factory.mktemp(name)
    folder = tmp_path_factory.getbasetemp().parent / name
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def warm_bin(clone: Path, shared_cache: Path):
    """The folder of the warm ``ragdiag`` shim (tests/docs/warm_server.py: one interpreter imports ragdiag,
    torch and the rest once and forks per command), or None with ``RAGDIAG_EXAMPLES_COLD=1``: every
    ``ragdiag`` of the examples then starts the console script cold, as in a user's shell.
    ``RAGDIAG_EXAMPLES_LOG=FILE`` appends the server's log there: each command's wall and CPU time."""
    if os.environ.get("RAGDIAG_EXAMPLES_COLD") == "1":
        yield None
        return
    log = os.environ.get("RAGDIAG_EXAMPLES_LOG")
    with warm_ragdiag(clone, environment(clone, shared_cache), Path(log) if log else None) as bin_dir:
        yield bin_dir


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run = passed = pages = 0
    skipped: list[str] = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call":
                continue
            counts = dict(getattr(report, "user_properties", [])).get("examples")
            if counts is None:
                continue
            pages += 1
            run += counts["run"]
            passed += counts["passed"]
            skipped += counts["skipped"]
    if not pages:
        return
    terminalreporter.write_sep("-", f"documentation examples: {pages} pages, {run} blocks run, "
                                    f"{passed} passed, {len(skipped)} skipped")
    for line in skipped:
        terminalreporter.write_line(f"skipped {line}")
