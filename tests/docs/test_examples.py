"""Every ```sh example of README.md and docs/ runs from a clone-like folder (tests/docs/examples.py
states the conventions; docs/contributing.md explains them to authors).

One test per page: its blocks run in order in a fresh folder holding the repository's files as a
user's clone has them (no data folder beside it), with the venv's ``ragdiag`` on PATH, outputs under
``/tmp/ragdiag`` mapped to a temporary folder, and the local chat test server standing in for the
LLM where a block says ``<!-- example: llm -->``. The terminal summary counts blocks run, skipped
(with their reasons) and passed.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.docs.examples import (
    OUT_PREFIX,
    ROOT,
    Block,
    blocks,
    environment,
    exports_before,
    missing_files,
    pages,
    placeholder_repositories,
    prepare,
    unset_variables,
)

TIMEOUT = 900
PAGES = [p for p in pages() if blocks(p)]
SLOW_PAGES = {"docs/commands/sweep.md", "docs/guides/own-data.md", "docs/commands/probe.md",
              "docs/commands/noise.md", "docs/commands/label.md", "docs/commands/evaluate.md",
              "docs/concepts/probes.md", "docs/concepts/verdict.md", "docs/commands/calibrate.md"}
RAY_PAGES = {"docs/guides/ray.md"}  # its example starts a local Ray instance


def _run(block: Block, workdir: Path, out_dir: Path, env: dict[str, str], batch: Any = None, exports: str = ""
         ) -> subprocess.CompletedProcess:
    """The block after the page's earlier exports (one reader's shell); no key is given: an example
    that needs ``OPENAI_API_KEY`` sets it (a dummy one for the test server)."""
    if block.batch_server:  # one batch test server for the whole page: its batches outlive a block
        return _bash(exports + prepare(block, out_dir, None, batch.base_url), workdir, env)
    if block.llm:
        from tests.servers.chat_server import ChatServer

        with ChatServer() as server:
            return _bash(exports + prepare(block, out_dir, server.base_url), workdir, env)
    return _bash(exports + prepare(block, out_dir, None), workdir, env)


def prepare_exports(page: Path, block: Block, out_dir: Path) -> str:
    return exports_before(page, block).replace(OUT_PREFIX, str(out_dir))


def _bash(code: str, workdir: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def page_params(commands: bool) -> list:
    """The pages with blocks, split in two (docs/commands/ or the rest) so that two test files can
    run on two workers under ``--dist loadfile``; the slowest pages are marked ``slow``."""
    chosen = [p for p in PAGES if str(p.relative_to(ROOT)).startswith("docs/commands/") == commands]
    return [pytest.param(p, id=str(p.relative_to(ROOT)),
                         marks=([pytest.mark.slow] if str(p.relative_to(ROOT)) in SLOW_PAGES else [])
                         + ([pytest.mark.ray] if str(p.relative_to(ROOT)) in RAY_PAGES else []))
            for p in chosen]


PAGE_CACHE = f"--cache-dir {OUT_PREFIX}/cache"
EMBEDDINGS = "embeddings.sqlite"  # ragdiag.remote.embedding_cache.CACHE_FILE
LOCAL_EMBEDDER = re.compile(r"--embedder local\b|dense:local\b")


def seed_page_cache(page: Path, shared_cache: Path, out_dir: Path) -> None:
    """A page whose commands embed into their own ``--cache-dir /tmp/ragdiag/cache`` starts that folder
    with the vectors of the session's shared cache (the bundled sets another page already embedded),
    copied with SQLite's backup (consistent while another worker writes). Cached vectors do not change
    results; only the embedding work is saved."""
    source = shared_cache / EMBEDDINGS
    run = [b.code for b in blocks(page) if not b.skip]
    if not source.exists() or not any(PAGE_CACHE in code and LOCAL_EMBEDDER.search(code) for code in run):
        return
    target = out_dir / "cache"
    target.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(source)) as src, contextlib.closing(sqlite3.connect(target / EMBEDDINGS)) as dst:
        src.backup(dst)


def run_page(page: Path, clone: Path, shared_cache: Path, warm_bin: Path | None, tmp_path: Path,
             record_property) -> None:
    """Each block of the page exits 0 (or the code its marker states), in order, in one folder."""
    workdir = tmp_path / "ragdiag"
    workdir.mkdir()
    for entry in clone.iterdir():
        (workdir / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    out_dir = tmp_path / "out" / "ragdiag"
    out_dir.mkdir(parents=True)
    seed_page_cache(page, shared_cache, out_dir)
    env = environment(workdir, shared_cache, warm_bin)
    run, skipped, passed = 0, [], 0
    with contextlib.ExitStack() as stack:
        batch = None
        for block in blocks(page):
            if block.skip:
                skipped.append(f"{block.page}:{block.line}: {block.skip}")
                continue
            if block.batch_server and batch is None:
                from tests.servers.batch_server import BatchServer

                batch = stack.enter_context(BatchServer())
            run += 1
            result = _run(block, workdir, out_dir, env, batch, prepare_exports(page, block, out_dir))
            record_property("examples", {"run": run, "skipped": skipped, "passed": passed})
            assert result.returncode == block.exit_code, (
                f"{block.page}:{block.line}: exit {result.returncode}, expected {block.exit_code}\n"
                f"--- block ---\n{block.code}--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n"
                f"{result.stderr[-4000:]}")
            passed += 1
    record_property("examples", {"run": run, "skipped": skipped, "passed": passed})


@pytest.mark.parametrize("page", page_params(commands=True))
def test_command_page_examples_run(page: Path, clone: Path, shared_cache: Path, warm_bin: Path | None, tmp_path: Path,
                                   record_property):
    """The examples of docs/commands/*.md (the other pages: test_examples_other_pages.py)."""
    run_page(page, clone, shared_cache, warm_bin, tmp_path, record_property)


def test_examples_follow_the_conventions():
    """Outputs only under /tmp/ragdiag, no data folder beside the clone, every skip gives a reason."""
    problems = []
    for page in pages():
        for block in blocks(page):
            for token in block.code.split():
                if token.startswith("/tmp/") and not token.startswith("/tmp/ragdiag"):
                    problems.append(f"{block.page}:{block.line}: writes outside /tmp/ragdiag: {token}")
            if "../shared" in block.code or "shared/data" in block.code:
                problems.append(f"{block.page}:{block.line}: reads a data folder a clone does not have")
            if block.skip is not None and (block.llm or block.batch_server):
                problems.append(f"{block.page}:{block.line}: both skip and a server")
    assert not problems, "\n".join(problems)


def test_no_block_uses_a_variable_no_earlier_block_sets():
    """``--corpus "$RAGDIAG_DATA/scifact"`` in a fresh shell reads ``/scifact``: every ``$NAME`` of a
    page (run or skipped blocks) is set by an earlier line of that page."""
    problems = [p for page in pages() for p in unset_variables(page)]
    assert not problems, "\n".join(problems)


def test_no_command_reads_a_file_nothing_provides():
    """A relative data file a command names is in the clone or written by an earlier command of the
    page (or named in its block's skip reason as the reader's own)."""
    problems = [p for page in pages() for p in missing_files(page)]
    assert not problems, "\n".join(problems)


def test_no_placeholder_repository():
    """No install line points at a placeholder repository (``github.com/OWNER/ragdiag``)."""
    problems = [p for page in pages() for p in placeholder_repositories(page)]
    assert not problems, "\n".join(problems)


def test_no_example_is_skipped_for_want_of_the_test_server():
    """Every example the bundled test servers can answer runs against them: a skip reason names a test
    server only beside a need they cannot meet (a data set fetched over the network)."""
    problems = [f"{b.page}:{b.line}: {b.skip}" for page in pages() for b in blocks(page)
                if b.skip and ("toy model server" in b.skip or "test server" in b.skip) and "network" not in b.skip]
    assert not problems, "\n".join(problems)
