"""The bundled data folders reach an installed wheel and are found there through resource_path."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    """The sdist and the wheel of the tree, built offline by one hatchling run (hatchling from the
    environment, as CI builds them), shared by the tests of this module."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-t", "wheel", "-d", str(out)],
                           capture_output=True, text=True, cwd=ROOT)
    assert built.returncode == 0, built.stderr
    return next(out.glob("ragdiag-*.tar.gz")), next(out.glob("ragdiag-*.whl"))


def test_wheel_carries_probes_prompts_fixtures_and_finds_them(dists, tmp_path):
    wheel = dists[1]
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


def test_sdist_and_wheel_build_offline_and_the_sdist_builds_the_same_wheel(dists, tmp_path):
    """CI builds both distributions with no network (hatchling from the environment): the sdist holds
    what a wheel needs, and a wheel pip builds from the unpacked sdist (no build isolation, as a user
    offline would) has the same files and metadata as the tree's."""
    import tarfile

    sdist, tree_wheel = dists
    from_sdist = tmp_path / "from-sdist"
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path / "unpacked", filter="data")
    top = names[0].split("/")[0]
    for required in ("pyproject.toml", "README.md", "ragdiag/cli/__init__.py", "prompts/grading.v1.toml",
                     "probes/README.md", "fixtures/retrieval-response-sample/samples_graded.json"):
        assert f"{top}/{required}" in names, required
    assert not any("/.venv/" in name or "__pycache__" in name for name in names)

    made = subprocess.run([sys.executable, "-m", "pip", "wheel", str(tmp_path / "unpacked" / top), "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(from_sdist)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    wheels = [tree_wheel, next(from_sdist.glob("ragdiag-*.whl"))]
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
