"""Benchmark of ``ragdiag correlate`` against the straightforward per-sample method.

1. An 81,600-row synthetic graded file (4 embedders, 400 queries per subset, K 2–15):
   F, T, nDCG × Spearman, Pearson, ratio segments, min 300 — wall time of the CLI as a
   subprocess (start-up included), median of 5 runs; the per-sample reference (Python loop
   over α and samples, scipy correlations) timed once in the same run for the ratio.
2. A 535,888-row file (the full dataset's size): all four measures × all four kinds — wall time
   (median of 3) and peak memory (max RSS of the child process).

Usage: .venv/bin/python benchmarks/bench_correlate.py [--skip-baseline]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, median_time, write_section

sys.path.insert(0, str(ROOT))  # tools/ and tests/ are not in the wheel
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from tests.metrics.reference import reference_correlate
from tools.synthetic import synthetic_graded

RAGDIAG = str(ROOT / ".venv" / "bin" / "ragdiag")
MID_CONFIGS = (
    ("A", 50, 5, range(2, 16)), ("Hp-e", 10, 2, range(2, 7)), ("Hs-m", 10, 2, range(2, 6)),
    ("M", 30, 3, range(2, 16)), ("N", 30, 2, range(2, 16)),
)
EMBEDDERS = ("AM", "EM", "ES", "QM")
FULL_ROWS = 535_888


def _run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([RAGDIAG, "correlate", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _peak_rss_gib(args: list[str]) -> float:
    """Max RSS of a fresh child running the command (ru_maxrss of the waited child, in KiB)."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, RAGDIAG, "correlate", *args], check=True,
                         capture_output=True, text=True)
    return int(out.stdout.strip()) / 2**20


def main() -> None:
    skip_baseline = "--skip-baseline" in sys.argv
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="ragdiag-bench-"))
    mid = synthetic_graded(n_queries=400, embedders=EMBEDDERS, configs=MID_CONFIGS, seed=1, answers=True)
    mid_path = work / "graded_81600.json"
    mid_path.write_text(json.dumps(mid))
    mid_args = ["--graded", str(mid_path), "--measures", "F,T,nDCG", "--corr", "spearman,pearson",
                "--segments", "ratio", "--min-samples", "300", "--format", "json", "--out", str(work / "mid.json")]
    _run(mid_args)  # warm the file cache
    mid_median, mid_samples = median_time(lambda: _run(mid_args), 5)

    baseline = None
    if not skip_baseline:  # the straightforward method on the same 81,600 rows (several minutes)
        start = time.perf_counter()
        reference_correlate(mid, "ratio", 300, ("F", "T", "nDCG"), ("spearman", "pearson"),
                            parse_alpha_grid("l350^0.95"))
        baseline = time.perf_counter() - start

    full = synthetic_graded(n_queries=1400, embedders=EMBEDDERS, seed=2, answers=True, max_rows=FULL_ROWS)
    full_path = work / "graded_full.json"
    full_path.write_text(json.dumps(full))
    size_mib = full_path.stat().st_size / 2**20
    del full
    full_args = ["--graded", str(full_path), "--measures", "F,E,T,nDCG", "--corr", "spearman,pearson,kendall_b,kendall_c",
                 "--segments", "ratio", "--min-samples", "300", "--format", "json", "--out", str(work / "full.json")]
    full_median, full_samples = median_time(lambda: _run(full_args), 3)
    peak = _peak_rss_gib(full_args)

    load_after = os.getloadavg()
    rows = [
        "| case | rows | ragdiag wall s (median) | runs | target | baseline (per-sample loop) | speed-up |",
        "|---|---|---|---|---|---|---|",
        f"| F, T, nDCG × Spearman, Pearson; ratio, min 300 | {len(mid):,} | {mid_median:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in mid_samples)} | ≤ 2 s | "
        + (f"{baseline:.1f} s (1 run) | {baseline / mid_median:.0f}× |" if baseline else "not run | – |"),
        f"| F, E, T, nDCG × 4 kinds; ratio, min 300 | {FULL_ROWS:,} ({size_mib:.0f} MiB JSON) | {full_median:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in full_samples)} | ≤ 30 s, ≤ 4 GB | peak RSS {peak:.2f} GiB | – |",
    ]
    text = (
        "## correlate\n\n"
        "`.venv/bin/python benchmarks/bench_correlate.py` — synthetic graded files from "
        "`tools.synthetic` (answers of 144 characters each), wall time of the `ragdiag correlate` "
        "CLI as a subprocess, start-up and JSON loading included, α grid l350^0.95 (702 values). "
        "The baseline is `tests.metrics.reference.reference_correlate` (a Python loop over α and "
        "samples with scipy correlations, the method of the paper's released analysis) on the same rows. "
        "Correlate validates every row (Np, K ≤ Nc, 0/1 inK, finite grades in 1–5) and refuses duplicate "
        f"sample keys inside these timings. 1-minute load average {load_before[0]:.1f} at the start and "
        f"{load_after[0]:.1f} at the end of the run"
        + (" (other agents were loading the machine: the timings are pessimistic)" if max(load_before[0], load_after[0]) > 2.5 else "")
        + ".\n\n" + "\n".join(rows)
    )
    write_section("correlate", text)
    print(text)


if __name__ == "__main__":
    main()
