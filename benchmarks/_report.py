"""Shared helpers for benchmarks: machine description, timing, and BENCHMARKS.md sections.

Each benchmark owns one section of BENCHMARKS.md, delimited by HTML comments, and rewrites
only that section, so benchmarks can be run one at a time.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
_HEADER = (
    "# Benchmarks\n\n"
    "Written by the scripts in `benchmarks/` (`make bench` runs them all); every number below was\n"
    "produced by the command named in its section. Medians of repeated runs; ratios are against a\n"
    "baseline measured in the same run.\n"
)


def machine() -> str:
    """One line describing the machine: CPU model, cores, memory, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB RAM, Python {platform.python_version()}"


def git_revision() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[float]]:
    """Median wall seconds of ``repeats`` calls of ``fn``, and all the samples."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


def write_section(name: str, markdown: str) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md with ``markdown``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else _HEADER
    block = f"{start}\n{markdown.rstrip()}\n\n_Machine: {machine()}; commit {git_revision()}._\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS_MD.write_text(text)
