"""CI strict mode (issue 18): a missing required component fails in CI and skips in a clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci_strict import import_or_skip_or_fail, in_ci, skip_or_fail

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value, strict", [("true", True), ("True", True), ("1", True), ("", False), ("false", False)])
def test_ci_variable(monkeypatch, value, strict):
    monkeypatch.setenv("CI", value)
    assert in_ci() is strict
    with pytest.raises(pytest.fail.Exception if strict else pytest.skip.Exception, match="chromium is not installed"):
        skip_or_fail("chromium is not installed")
    with pytest.raises(pytest.fail.Exception if strict else pytest.skip.Exception, match="no_such_module_i18"):
        import_or_skip_or_fail("no_such_module_i18", "no_such_module_i18 is not installed")
    assert import_or_skip_or_fail("json", "the standard library").dumps([1]) == "[1]"


def _collect_pgvector_test_without_psycopg(tmp_path: Path, ci: str) -> subprocess.CompletedProcess:
    hidden = tmp_path / "hidden"
    hidden.mkdir(exist_ok=True)
    (hidden / "psycopg.py").write_text('raise ImportError("psycopg hidden by the CI strict-mode test")\n')
    # third-party pytest plugins (hypothesis, langsmith, …) play no part in the skip-or-fail decision and
    # cost most of each collection's start-up (~3 of 4 s CPU): not loaded
    env = {**os.environ, "CI": ci, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join([str(hidden), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                           "tests/bench/test_pgvector_robustness.py"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_pgvector_test_fails_in_ci_and_skips_in_a_clone_without_its_component(tmp_path):
    clone = _collect_pgvector_test_without_psycopg(tmp_path, "")
    assert clone.returncode == 5 and "SKIPPED" in clone.stdout and "psycopg) is not installed" in clone.stdout, clone.stdout
    ci = _collect_pgvector_test_without_psycopg(tmp_path, "true")
    assert ci.returncode != 0 and ci.returncode != 5, ci.stdout
    assert "CI=true: a required component is missing" in ci.stdout and "psycopg" in ci.stdout


def _make_browser(tmp_path: Path, ci: str) -> subprocess.CompletedProcess:
    """``make browser`` where neither chromium nor apt-get can be found (an empty PATH)."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    make = shutil.which("make")
    assert make, "make is needed to run the Makefile"
    return subprocess.run([make, "-s", "browser"], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"PATH": str(empty), "CI": ci, "HOME": str(tmp_path)}, check=False)


def test_make_browser_fails_loudly_in_ci_and_notes_the_skip_in_a_clone(tmp_path):
    ci = _make_browser(tmp_path, "true")
    assert ci.returncode != 0 and "installing chromium failed (CI=true: the browser test needs it)" in ci.stderr
    clone = _make_browser(tmp_path, "")
    assert clone.returncode == 0 and "chromium not installed (the browser test will skip, saying why)" in clone.stderr


def test_ci_run_turns_strict_mode_on():
    assert 'export CI="${CI:-true}"' in (REPO / ".ci" / "run").read_text()
