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


def test_sdist_and_wheel_build_offline_and_the_sdist_builds_the_same_wheel(tmp_path):
    """CI builds both distributions with no network (hatchling from the environment): the sdist holds
    what a wheel needs, and a wheel built from the unpacked sdist has the same files and metadata."""
    import tarfile

    sdist_dir, from_sdist = tmp_path / "sdist", tmp_path / "from-sdist"
    built = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(sdist_dir)],
                           capture_output=True, text=True, cwd=ROOT)
    assert built.returncode == 0, built.stderr
    sdist = next(sdist_dir.glob("ragdiag-*.tar.gz"))
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path / "unpacked", filter="data")
    top = names[0].split("/")[0]
    for required in ("pyproject.toml", "README.md", "ragdiag/cli/__init__.py", "prompts/grading.v1.toml",
                     "probes/README.md", "fixtures/retrieval-response-sample/samples_graded.json"):
        assert f"{top}/{required}" in names, required
    assert not any("/.venv/" in name or "__pycache__" in name for name in names)

    wheels = []
    for source, out in ((ROOT, tmp_path / "from-tree"), (tmp_path / "unpacked" / top, from_sdist)):
        made = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                               "-q", "-w", str(out)], capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        wheels.append(next(out.glob("ragdiag-*.whl")))
    contents = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            contents.append(sorted(n for n in archive.namelist() if not n.endswith("RECORD")))
            metadata = archive.read(next(n for n in archive.namelist() if n.endswith("METADATA"))).decode()
            entry_points = archive.read(next(n for n in archive.namelist() if n.endswith("entry_points.txt"))).decode()
    assert contents[0] == contents[1]
    assert "ragdiag = ragdiag.cli:main" in entry_points
    assert "Requires-Dist: typer" in metadata and "Provides-Extra: faiss" in metadata
    assert "Requires-Dist: faiss-cpu>=1.8; extra == 'faiss'" in metadata
