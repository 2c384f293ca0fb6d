"""The light core installs alone and runs ``correlate``; a command needing an extra says what to install.

Builds the project wheel, installs it with its core dependencies only into a fresh venv (pip may
take the wheels from its cache), and drives the installed console script. A wheel that cannot be
built or installed skips in a clone and fails in CI (:mod:`tests.ci_strict`).

The venv is made without pip and filled by the running pip (``pip --python``), without compiling
byte code: seeding pip into the venv and byte-compiling all of numpy and scipy took ~30 s of CPU of
the ~36 s the module cost, and neither is what is checked (what the core pulls in, and that the
installed script runs; the modules it imports compile on first use).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.ci_strict import skip_or_fail

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "faiss", "sentence_transformers", "openai", "voyageai", "datasets", "matplotlib", "faker")

pytestmark = pytest.mark.slow


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("core")
    wheels = root / "wheels"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(REPO)])
    if built.returncode != 0:
        skip_or_fail(f"cannot build the wheel here: {built.stderr.strip()[-300:]}")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    wheel = next(wheels.glob("ragdiag-*.whl"))
    installed = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-compile", "-q", str(wheel)])
    if installed.returncode != 0:
        skip_or_fail(f"pip cannot install the core dependencies here (no registry?): {installed.stderr.strip()[-300:]}")
    return env_dir


def _ragdiag(env_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["RAGDIAG_CACHE_DIR"] = str(cwd / "cache")
    return _run([str(env_dir / "bin" / "ragdiag"), *args], cwd=cwd, env=env)


def test_core_has_no_heavy_dependency(core_venv):
    probe = f"import importlib.util, json; print(json.dumps({{m: importlib.util.find_spec(m) is not None for m in {HEAVY!r}}}))"
    found = json.loads(_run([str(core_venv / "bin" / "python"), "-c", probe]).stdout)
    assert not any(found.values()), f"the core install pulled {[m for m, ok in found.items() if ok]}"


def test_core_runs_correlate_on_the_bundled_sample(core_venv, tmp_path):
    result = _ragdiag(core_venv, "correlate", "--dataset", "msmarco", "--offline", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["meta"]["simulated_grades"] is True
    assert report["segments_kept"] > 0 and report["results"]


def test_core_runs_correlate_on_a_graded_file(core_venv, tmp_path):
    graded = REPO / "fixtures" / "retrieval-response-sample" / "samples_graded.json"
    out = tmp_path / "corr.json"
    result = _ragdiag(core_venv, "correlate", "--graded", str(graded), "--min-samples", "50", "--out", str(out), "--format", "json",
                      cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["results"]


def test_a_command_needing_an_extra_names_the_install(core_venv, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "", "text": "a passage"}\n')
    result = _ragdiag(core_venv, "index", "build", "--corpus", str(corpus), "--out-dir", str(tmp_path / "idx"), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "pip install -e '.[" in lines[0] and "' in the ragdiag clone" in lines[0]
