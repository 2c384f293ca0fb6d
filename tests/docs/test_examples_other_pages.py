"""The shell examples of README.md and of every docs/ page outside docs/commands/ (a separate file so
that, under ``--dist loadfile``, they run on another worker than the command pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.test_examples import page_params, run_page


@pytest.mark.parametrize("page", page_params(commands=False))
def test_page_examples_run(page: Path, clone: Path, shared_cache: Path, warm_bin: Path | None, tmp_path: Path,
                           record_property):
    run_page(page, clone, shared_cache, warm_bin, tmp_path, record_property)
