"""Write requirements.lock: every dependency of `.[all,dev]`, pinned with hashes (run by `make lock`).

The lock is resolved by uv (`uv pip compile --universal`, Python ≥ 3.11) from pyproject.toml with torch
held at the Makefile's TORCH_VERSION, starting from the current lock: a version already locked stays
unless pyproject.toml no longer allows it (delete requirements.lock to re-resolve everything). torch itself is left out, and so is every package that only torch
pulls in on one platform (its CUDA stack: nvidia-*, cuda-*, triton): `tools/install_torch.sh` chooses the
build (CPU or CUDA) and brings those. torch's platform-independent dependencies (sympy, networkx, …) stay
pinned like everything else.

    python -m tools.lock [--torch-version 2.13.0] [--out requirements.lock]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ("all", "dev")
HEADER = "# The locked environment of `make install` (tested in CI). Regenerate with `make lock`; see tools/lock.py.\n"
LOCK = REPO / "requirements.lock"
NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==")


def uv() -> str:
    """uv from this interpreter's environment (the dev extra installs it), else from PATH."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else "uv"


def compile_lock(torch_version: str) -> str:
    """uv's hashed, universal lock text for pyproject's extras, torch pinned and not emitted."""
    with tempfile.TemporaryDirectory() as tmp:
        pin = Path(tmp) / "torch.txt"
        pin.write_text(f"torch=={torch_version}\n", encoding="utf-8")
        raw = Path(tmp) / "raw.lock"
        if LOCK.is_file():  # uv keeps the versions already in its output file: only what pyproject changed moves
            raw.write_text(LOCK.read_text(encoding="utf-8"), encoding="utf-8")
        command = [uv(), "pip", "compile", "pyproject.toml", *(f"--extra={e}" for e in EXTRAS), "--universal",
                   "--python-version", "3.11", "--generate-hashes", "--constraint", str(pin),
                   "--no-emit-package", "torch", "--custom-compile-command", "make lock", "--quiet",
                   "--output-file", str(raw)]
        subprocess.run(command, cwd=REPO, check=True)
        return raw.read_text(encoding="utf-8")


def blocks(text: str) -> list[list[str]]:
    """The lock's entries, one list of lines each (the requirement line, its hashes, its `# via` lines)."""
    entries: list[list[str]] = []
    for line in text.splitlines():
        if NAME.match(line):
            entries.append([line])
        elif entries and line.startswith("    "):
            entries[-1].append(line)
    return entries


def via(entry: list[str]) -> set[str]:
    """The packages that require this entry, from its `# via` comment (one name inline or one per line)."""
    names: set[str] = set()
    for line in entry:
        text = line.strip()
        if text.startswith("# via "):
            names.add(text[len("# via "):].strip())
        elif text.startswith("#   "):
            names.add(text[4:].strip())
    return {n.split(" ")[0].lower() for n in names if n}


def without_torch_platform_stack(text: str) -> str:
    """The lock without the entries that only torch (or other such entries) requires on one platform."""
    entries = blocks(text)
    name_of = {id(e): NAME.match(e[0]).group(1).lower() for e in entries}  # type: ignore[union-attr]
    dropped: set[str] = set()
    changed = True
    while changed:
        changed = False
        for entry in entries:
            name = name_of[id(entry)]
            platform_only = "sys_platform" in entry[0] or "platform_machine" in entry[0]
            if name not in dropped and platform_only and via(entry) <= {"torch"} | dropped:
                dropped.add(name)
                changed = True
    kept = [entry for entry in entries if name_of[id(entry)] not in dropped]
    note = f"# Left to tools/install_torch.sh: torch, {', '.join(sorted(dropped))}\n" if dropped else ""
    return HEADER + note + "".join("\n".join(entry) + "\n" for entry in kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--out", type=Path, default=REPO / "requirements.lock")
    args = parser.parse_args(argv)
    text = without_torch_platform_stack(compile_lock(args.torch_version))
    args.out.write_text(text, encoding="utf-8")
    print(f"lock: wrote {args.out} ({len(blocks(text))} packages)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
