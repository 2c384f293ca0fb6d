"""The locked environment (issue 28): requirements.lock satisfies pyproject.toml, pins every entry with
hashes, leaves torch to tools/install_torch.sh, and — in an environment `make install` built — is
exactly what is installed."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def _lock() -> list[tuple[str, Version, Marker | None, list[str]]]:
    """(name, version, marker, hashes) for every entry of the lock."""
    entries: list[tuple[str, Version, Marker | None, list[str]]] = []
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = ENTRY.match(line)
        if match:
            marker = Marker(match.group(3)) if match.group(3) else None
            entries.append((canonicalize_name(match.group(1)), Version(match.group(2)), marker, []))
        elif line.strip().startswith("--hash=sha256:"):
            entries[-1][3].append(line.strip())
    return entries


def _applies(marker: Marker | None) -> bool:
    return marker is None or marker.evaluate()


def _pinned() -> dict[str, Version]:
    """The version the lock pins for this interpreter and platform, by package name."""
    return {name: version for name, version, marker, _ in _lock() if _applies(marker)}


def _requirements(extras: tuple[str, ...] = ("all", "dev")) -> list[Requirement]:
    """pyproject's dependencies and those of ``extras``, self-references (ragdiag[x]) expanded."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    optional = project["optional-dependencies"]
    found, todo, seen = [Requirement(r) for r in project["dependencies"]], list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == "ragdiag":
                todo.extend(requirement.extras)
            else:
                found.append(requirement)
    return found


def test_every_requirement_of_pyproject_is_locked_at_an_allowed_version():
    pinned = _pinned()
    problems = []
    for requirement in _requirements():
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name == "torch":
            continue
        if name not in pinned:
            problems.append(f"{requirement} is not in requirements.lock")
        elif not requirement.specifier.contains(pinned[name], prereleases=True):
            problems.append(f"{requirement}: the lock pins {pinned[name]}")
    assert problems == [], "requirements.lock no longer satisfies pyproject.toml (run `make lock`): " + "; ".join(problems)


def test_every_entry_is_pinned_with_hashes_and_torch_is_left_to_install_torch():
    entries = _lock()
    assert entries, "requirements.lock holds no entry"
    assert [name for name, *_, hashes in entries if not hashes] == []
    names = {name for name, *_ in entries}
    assert "torch" not in names and not any(n.startswith(("nvidia-", "triton")) for n in names)


def test_the_makefile_installs_the_lock():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--require-hashes -r $(LOCK)" in makefile and "LOCK          := requirements.lock" in makefile


@pytest.mark.skipif(not (Path(sys.prefix) / ".ragdiag-installed").exists(),
                    reason="not an environment `make install` built from the lock (its stamp file is absent)")
def test_the_installed_environment_is_the_lock():
    wrong = []
    for name, version in _pinned().items():
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            wrong.append(f"{name} missing")
            continue
        if installed != version:
            wrong.append(f"{name} {installed} (lock: {version})")
    assert wrong == [], "the environment differs from requirements.lock: " + ", ".join(wrong)
