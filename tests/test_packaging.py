"""The bundled data folders reach an installed wheel and are found there through resource_path."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_carries_probes_prompts_fixtures_and_finds_them(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("ragdiag-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
    for required in ("ragdiag/_data/prompts/grading.v1.toml", "ragdiag/_data/probes/README.md",
                     "ragdiag/_data/fixtures/retrieval-response-sample/samples_graded.json"):
        assert required in names
    code = ("import ragdiag.resources as r; "
            "print(r.resource_path('fixtures', 'retrieval-response-sample', 'meta.json').is_file())")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                           env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert found.stdout.strip() == "True", found.stderr
    assert str(tmp_path / "site") in subprocess.run(
        [sys.executable, "-c", "import ragdiag; print(ragdiag.__file__)"], capture_output=True, text=True,
        cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
    ).stdout
