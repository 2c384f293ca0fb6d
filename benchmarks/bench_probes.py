"""Speed of the embedding probes on the bundled local embedder (all-MiniLM-L6-v2).

Targets (issue 5): ``ragdiag probe names`` with 30 queries × 15 runs × 11 conditions ≤ 3 min on
2 cores, ``ragdiag noise`` (bundled queries, levels 0–4) ≤ 1 min, and a second identical run makes
zero embedding calls. Each command runs as a subprocess (model loading included) with a fresh
cache directory ("cold") and then again on the filled cache ("cached"). Baseline, measured in
the same run: the embedder's raw throughput on the probe's own texts, which gives the time the
names probe would need without deduplication.

Run: ``.venv/bin/python benchmarks/bench_probes.py``
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, median_time, write_section

RAGDIAG = str(ROOT / ".venv" / "bin" / "ragdiag")
NAMES = ["probe", "names", "--queries", "30", "--runs", "15", "--seed", "0", "--format", "json"]
NOISE = ["noise", "--levels", "0-4", "--queries", "bundled", "--seed", "0", "--format", "json"]


def _run(args: list[str], cache: Path) -> str:
    done = subprocess.run([RAGDIAG, *args, "--cache-dir", str(cache), "--out", str(cache / "out.json")],
                          capture_output=True, text=True, check=True)
    return done.stderr


def _calls(stderr: str) -> str:
    return "; ".join(re.findall(r"(\d+ model calls, \d+ texts embedded)", stderr))


def _timed(args: list[str], cache: Path) -> tuple[float, str]:
    start = time.perf_counter()
    stderr = _run(args, cache)
    return time.perf_counter() - start, stderr


def _cold_and_cached(args: list[str], repeats: int) -> tuple[float, list[float], float, str, str]:
    """Median cold time, all cold samples, median cached time, and the call counters of each."""
    cold, cached = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            seconds, cold_stderr = _timed(args, Path(tmp))
            cold.append(seconds)
            seconds, cached_stderr = _timed(args, Path(tmp))
            cached.append(seconds)
    return statistics.median(cold), cold, statistics.median(cached), _calls(cold_stderr), _calls(cached_stderr)


def _throughput(lang: str) -> tuple[float, int, int]:
    """Texts/s of the raw embedder on 2,000 of the names probe's texts; totals of that probe."""
    from ragdiag.probes.ablations import ABLATIONS
    from ragdiag.probes.names import build_texts
    from ragdiag.retrieval.embedders import load_embedder

    texts = build_texts(lang, 30, 15, 0, list(ABLATIONS))
    sample = texts.unique[:2000]
    with tempfile.TemporaryDirectory() as tmp:
        emb = load_embedder("local", Path(tmp), use_cache=False)
        emb.encode(sample[:64])  # load the model, warm up
        seconds, _ = median_time(lambda: emb.encode(sample), 1)
    return len(sample) / seconds, texts.total, len(texts.unique)


def main() -> None:
    rows = []
    for lang in ("en", "fr"):
        rate, total, unique = _throughput(lang)
        cold, samples, cached, calls_cold, calls_cached = _cold_and_cached([*NAMES, "--lang", lang], repeats=1)
        rows.append(
            f"| names {lang.upper()} 30×15×11 | {cold:.1f} s ({', '.join(f'{s:.1f}' for s in samples)}) | "
            f"{cached:.1f} s | {total:,} → {unique:,} | {rate:.0f} texts/s → {total / rate:.0f} s | "
            f"{calls_cold} → {calls_cached} |"
        )
    for lang in ("en", "fr"):
        cold, samples, cached, calls_cold, calls_cached = _cold_and_cached([*NOISE, "--lang", lang], repeats=3)
        rows.append(
            f"| noise {lang.upper()} bundled, levels 0–4 | {cold:.1f} s ({', '.join(f'{s:.1f}' for s in samples)}) | "
            f"{cached:.1f} s | | | {calls_cold} → {calls_cached} |"
        )
    table = "\n".join(
        [
            "## Embedding probes (`benchmarks/bench_probes.py`)",
            "",
            "Whole CLI runs as subprocesses (model loading included), fresh cache (cold, median of the",
            "listed runs) then the filled cache (cached). Targets: names ≤ 180 s, noise ≤ 60 s, cached",
            "run 0 model calls. Baseline: the raw embedder's throughput on the probe's own texts, and",
            "the time embedding every text without deduplication would take at that rate.",
            "",
            "| command | cold | cached | texts total → unique | baseline: rate → no-dedup time | embedding calls cold → cached |",
            "|---|---|---|---|---|---|",
            *rows,
        ]
    )
    write_section("probes", table)
    print(table)


if __name__ == "__main__":
    main()
