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


# --- chains a user's shell would break: checked on every block, run or skipped ---------------------

VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
ASSIGNED = re.compile(r"(?:^|[\s;(&|])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b"
                      r"|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_]*)")
EXPORTED = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)\s*(?:#.*)?$", re.MULTILINE)
# set by the shell or the CI runner, not by the reader
GIVEN = {"HOME", "PATH", "PWD", "USER", "RUNNER_TEMP", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"}
PLACEHOLDER_REPO = re.compile(r"\b(?:OWNER|USER|YOUR[-_]?(?:ORG|NAME|USER)|your[-_](?:org|name|user)|<[^>]+>)/[\w.-]+")
DATA_FILE = re.compile(r"^[\w][\w./-]*\.(?:jsonl|json|tsv|csv|parquet|trec|txt|npy|toml)$")
WRITES = ("--out", "--out-dir", "--per-query", "--plot", "--plot-dir", ">", "--html", "--qrels-out")


def _code(text: str) -> str:
    """Shell text without comments and single-quoted strings (no expansion happens there)."""
    text = re.sub(r"'[^'\n]*'", "''", text)
    return re.sub(r"(?m)(^|\s)#.*$", r"\1", text)


def unset_variables(path: Path) -> list[str]:
    """``$NAME`` uses that no earlier line of the page sets (export, assignment, for, read): what a
    reader's fresh shell expands to nothing (``--corpus "$RAGDIAG_DATA/scifact"`` → ``/scifact``)."""
    problems, known = [], set(GIVEN)
    for block in blocks(path):
        for line in _code(block.code).split("\n"):
            known |= {next(g for g in m.groups() if g) for m in ASSIGNED.finditer(line)}
            problems += [f"{block.page}:{block.line}: ${name} is set by no earlier block of the page"
                         for name in dict.fromkeys(VARIABLE.findall(line)) if name not in known]
    return problems


def placeholder_repositories(path: Path) -> list[str]:
    """Placeholder repositories (``github.com/OWNER/ragdiag``) in any fenced block of the page."""
    text, problems, fenced = path.read_text(encoding="utf-8"), [], False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced and (m := PLACEHOLDER_REPO.search(line)) and ("git" in line or "http" in line or "pip" in line):
            problems.append(f"{path.relative_to(ROOT)}:{number}: placeholder repository {m.group(0)!r}")
    return problems


def commands_of(path: Path) -> list[tuple[str, int, str]]:
    """(page, line, shell text) of every ```sh block that runs and of every ``$ ``-prompted line of a
    ```text block (a transcript a reader retypes); a skipped block names the reader's own files."""
    found = [(b.page, b.line, b.code) for b in blocks(path) if not b.skip]
    text, fence = path.read_text(encoding="utf-8").split("\n"), None
    for number, line in enumerate(text, start=1):
        if line.strip().startswith("```"):
            fence = line.strip()[3:] if fence is None else None
        elif fence == "text" and line.startswith("$ "):
            found.append((str(path.relative_to(ROOT)), number, line[2:]))
    return sorted(found, key=lambda item: item[1])


def missing_files(path: Path) -> list[str]:
    """Relative data files a command reads that neither the clone holds nor an earlier command of the
    page writes (``ragdiag import ragas ragas_1to5.jsonl`` with no such file bundled). A skipped
    block is left out: its skip reason says what the reader brings."""
    problems, written = [], set()
    for page, line, code in commands_of(path):
        tokens = _code(code).replace("\\\n", " ").split()
        for before, token in zip(["", *tokens], tokens):
            name = token.strip("\"'")
            if before == "cd":  # paths are relative to another folder from here on
                break
            if before in WRITES or before.startswith(">") or "=" in before:
                written.add(name)
                continue
            if not DATA_FILE.match(name) or name in written or (ROOT / name).exists():
                continue
            if any(name.startswith(w.rstrip("/") + "/") for w in written):
                continue
            problems.append(f"{page}:{line}: {name} is neither in the clone nor written by an earlier command")
    return problems


def exports_before(path: Path, block: Block) -> str:
    """The ``export NAME=VALUE`` lines of the page's run blocks above ``block``: a reader types the
    page into one shell, so what an earlier block exported is set in a later one."""
    return "".join(f"export {name}={value}\n" for b in blocks(path) if b.line < block.line and not b.skip
                   for name, value in EXPORTED.findall(b.code))
def environment(workdir: Path, cache: Path, warm_bin: Path | None = None) -> dict[str, str]:
    """The blocks' environment: the venv's ``ragdiag`` and ``python`` on PATH (behind the warm
    server's ``ragdiag`` shim when ``warm_bin`` is given, tests/docs/warm_server.py), the code of
    ``workdir``, the shared cache, offline hubs, a fixed terminal width and no colour. No key and no
    data folder: a page that needs them sets them, as a reader's shell would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDIAG_", "OPENAI_", "PYTEST_"))}
    path = [str(warm_bin)] if warm_bin else []
    env.update({
        "PATH": os.pathsep.join([*path, str(Path(sys.executable).parent), env.get("PATH", "")]),
        "PYTHONPATH": str(workdir),
        "RAGDIAG_CACHE_DIR": str(cache),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "COLUMNS": "100",
        "NO_COLOR": "1",
    })
    return env
