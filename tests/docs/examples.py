"""The shell examples of README.md and docs/: extraction and the conventions they follow.

A block is a fenced ```sh block. The ``<!-- example: … -->`` comments on the lines right above its
fence (no blank line between) say how it runs:

- ``<!-- example: llm -->``: run with the local chat test server (tests/servers/chat_server.py)
  started; ``http://127.0.0.1:8000/v1`` in the block is replaced by its base URL and
  ``OPENAI_API_KEY`` is set;
- ``<!-- example: exit N -->``: the block is expected to exit with status N (default 0);
- ``<!-- example: skip: REASON -->``: not run (needs a real key, a GPU or the network); listed with
  REASON.

Blocks of a page run in order in one fresh folder laid out like a clone; outputs go under
``/tmp/ragdiag/…``, which the test maps to a temporary folder.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*example:\s*(.+?)\s*-->\s*$")
OUT_PREFIX = "/tmp/ragdiag"
LLM_URL = "http://127.0.0.1:8000/v1"
BATCH_URL = "http://127.0.0.1:8766/v1"  # the batch test server's documented port (tests/servers/batch_server.py)


@dataclass
class Block:
    page: str
    line: int
    code: str
    llm: bool = False
    batch_server: bool = False
    exit_code: int = 0
    skip: str | None = None
    markers: list[str] = field(default_factory=list)


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _apply(block: Block, marker: str) -> None:
    if marker == "llm":
        block.llm = True
    elif marker == "batch-server":
        block.batch_server = True
    elif marker.startswith("skip:") and marker[5:].strip():
        block.skip = marker[5:].strip()
    elif re.fullmatch(r"exit \d+", marker):
        block.exit_code = int(marker.split()[1])
    else:
        raise ValueError(f"{block.page}:{block.line}: unknown example marker {marker!r} "
                         "(llm, batch-server, exit N, skip: REASON)")


def blocks(path: Path) -> list[Block]:
    """The ```sh blocks of one page with their markers."""
    lines = path.read_text(encoding="utf-8").split("\n")
    name = str(path.relative_to(ROOT))
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise ValueError(f"{name}:{start + 1}: unclosed ```sh block")
            block = Block(name, start + 1, "\n".join(lines[start + 1:j]) + "\n")
            k = start - 1
            while k >= 0 and MARKER.match(lines[k].strip()):
                block.markers.insert(0, MARKER.match(lines[k].strip()).group(1))
                k -= 1
            for marker in block.markers:
                _apply(block, marker)
            found.append(block)
            i = j + 1
        else:
            i += 1
    return found


def prepare(block: Block, out_dir: Path, base_url: str | None, batch_url: str | None = None) -> str:
    """The block's text as run: /tmp/ragdiag → out_dir, the LLM URL → the chat test server's, the batch
    server's documented URL → the page's batch test server's."""
    code = block.code.replace(OUT_PREFIX, str(out_dir))
    if base_url is not None:
        code = code.replace(LLM_URL, base_url)
    if batch_url is not None:
        code = code.replace(BATCH_URL, batch_url)
    return code


def environment(workdir: Path, cache: Path, warm_bin: Path | None = None) -> dict[str, str]:
    """The blocks' environment: the venv's ``ragdiag`` and ``python`` on PATH (behind the warm
    server's ``ragdiag`` shim when ``warm_bin`` is given, tests/docs/warm_server.py), the code of
    ``workdir``, the shared cache, offline hubs, a fixed terminal width and no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDIAG_", "OPENAI_", "PYTEST_"))}
    path = [str(warm_bin)] if warm_bin else []
    env.update({
        "PATH": os.pathsep.join([*path, str(Path(sys.executable).parent), env.get("PATH", "")]),
        "PYTHONPATH": str(workdir),
        "RAGDIAG_CACHE_DIR": str(cache),
        "RAGDIAG_DATA": str(workdir.parent / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "COLUMNS": "100",
        "NO_COLOR": "1",
    })
    return env
