"""Benchmark of ``ragdiag compare``'s start-up: where the seconds of a 10,000 × 10 comparison go.

The whole command as a subprocess (the tables of ``bench_compare.py``: 10,000 paired queries, 10
metric columns; ``--test t``, Holm, JSON out), beside baselines measured in the same run: the
start-up alone (``ragdiag --version``), and the bare imports of ``scipy.stats`` and of
``statsmodels.stats.multitest`` (which compare no longer imports: its Holm / Benjamini–Hochberg
are computed in ``ragdiag.compare.paired.adjust``), and of ``scipy.special``, whose functions
replace ``scipy.stats`` in ``--test t`` (``ragdiag.compare.student``). Wall and CPU (user + system of the child),
median of ``--repeats`` runs after one warm-up; the load average is noted, since on a shared
machine the wall time includes waiting for a core while the CPU time does not.

Usage: python benchmarks/bench_startup.py [--repeats 3]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_compare
from _report import ROOT, write_section

PY = sys.executable


def main() -> None:
    bench_compare.REPEATS = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        base, new = bench_compare.make_tables(Path(tmp))
        compare = bench_compare.timed([*bench_compare.CLI, "compare", "--base", str(base), "--new", str(new),
                                       "--test", "t", "--out", str(Path(tmp) / "t.json")], env)
        startup = bench_compare.timed([*bench_compare.CLI, "--version"], env)
        scipy_stats = bench_compare.timed([PY, "-c", "import scipy.stats"], env)
        scipy_special = bench_compare.timed([PY, "-c", "import scipy.special"], env)
        statsmodels = bench_compare.timed([PY, "-c", "import statsmodels.stats.multitest"], env)
    load_after = os.getloadavg()[0]
    rows = [("`ragdiag compare --test t` (10,000 × 10, Holm, JSON out)", compare),
            ("baseline: `ragdiag --version` (start-up only)", startup),
            ("baseline: `python -c 'import scipy.stats'` (no longer imported by `--test t`)", scipy_stats),
            ("baseline: `python -c 'import scipy.special'` (its t and normal quantiles, `ragdiag.compare.student`)",
             scipy_special),
            ("baseline: `python -c 'import statsmodels.stats.multitest'` (no longer imported)", statsmodels)]
    lines = ["## compare start-up (`benchmarks/bench_startup.py`)", "",
             f"Median of {bench_compare.REPEATS} runs after one warm-up, each a fresh process. Load average (1 min) "
             f"{load_before:.1f} before and {load_after:.1f} after, on {os.cpu_count()} cores"
             + (": the machine was shared, so wall times include waiting for a core; compare the CPU column."
                if max(load_before, load_after) > (os.cpu_count() or 1) else "."), "",
             "| run | median wall | median CPU | CPU / start-up's |", "|---|--:|--:|--:|"]
    lines += [f"| {label} | {wall:.2f} s | {cpu:.2f} s | {cpu / startup[1]:.1f}× |" for label, (wall, cpu) in rows]
    text = "\n".join(lines)
    print(text)
    write_section("startup", text)


if __name__ == "__main__":
    main()
