"""Benchmark of ``ragdiag correlate`` on a Parquet graded table of 1M and 10M rows (not a timed test).

Synthetic tables from ``tools.synthetic_parquet`` (the score and grade model of ``tools.synthetic``,
vectorised), correlated with the paper's defaults: F, E, T, nDCG; Spearman and Pearson; ratio
segments, min 300; α grid l350^0.95. Each run is the ``ragdiag correlate`` CLI in a fresh process
(start-up, reading and validating the file included); wall time and peak RSS (``ru_maxrss`` of the
waited child, ``resource.getrusage``) come from the same runs. Beside them, in the same run: the
535,888-row table (the full dataset's size, ``tools.synthetic.synthetic_graded``) as JSON, the
format correlate read before, and the same rows as Parquet.

``--only-536k``: only the 535,888 rows as JSON and as Parquet, printed (BENCHMARKS.md untouched): the
front-door check of ``correlate`` on a JSON graded file against Parquet, in a few minutes.

The runs use Python's bytecode cache, as an installed ragdiag does: the children write and read it in the
benchmark's temporary folder (``PYTHONPYCACHEPREFIX``, ``PYTHONDONTWRITEBYTECODE`` unset) after untimed
warm-up runs on 2,000 rows, so that no timed run compiles ragdiag's modules from source.
``--no-bytecode-cache``: the children inherit the environment as it is (with ``PYTHONDONTWRITEBYTECODE=1``
every run compiles them again).

Usage: .venv/bin/python benchmarks/bench_parquet.py [--repeats 3] [--only-536k] [--no-bytecode-cache]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, write_section

sys.path.insert(0, str(ROOT))  # tools/ is not in the wheel
from tools.synthetic import synthetic_graded
from tools.synthetic_parquet import write_synthetic_parquet

RAGDIAG = str(Path(sys.executable).with_name("ragdiag"))


def correlate_args(min_samples: int) -> list[str]:
    """The paper's defaults: F, E, T, nDCG; Spearman and Pearson; ratio segments; JSON."""
    return ["--measures", "F,E,T,nDCG", "--corr", "spearman,pearson", "--segments", "ratio", "--min-samples",
            str(min_samples), "--format", "json"]


ARGS = correlate_args(300)
GIB = 2**30
WRAPPER = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
           "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
           "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
           "print(time.perf_counter() - t, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)")


def child_environment(work: Path, bytecode_cache: bool) -> dict[str, str]:
    """The environment of the timed processes: with ``bytecode_cache``, Python's bytecode cache in ``work``."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def run_once(graded: Path, out: Path, env: dict[str, str], args: list[str] = ARGS) -> tuple[float, float, float]:
    """(wall seconds, peak RSS in GiB, CPU seconds: user + system) of one ``ragdiag correlate`` process."""
    result = subprocess.run([sys.executable, "-c", WRAPPER, RAGDIAG, "correlate", "--graded", str(graded), *args,
                             "--out", str(out)], check=True, capture_output=True, text=True, env=env)
    seconds, kib, cpu = result.stdout.split()
    return float(seconds), int(kib) * 1024 / GIB, float(cpu)


def measure(graded: Path, out: Path, repeats: int, env: dict[str, str]) -> dict:
    runs = [run_once(graded, out, env) for _ in range(repeats)]
    return {"median": statistics.median(s for s, _, _ in runs), "times": [s for s, _, _ in runs],
            "cpu": statistics.median(c for _, _, c in runs),
            "peak_gib": max(r for _, r, _ in runs), "results": json.loads(out.read_text())["results"]}


def main() -> None:
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    work = Path(tempfile.mkdtemp(prefix="ragdiag-bench-parquet-"))
    load_before = os.getloadavg()
    only_536k = "--only-536k" in sys.argv
    bytecode_cache = "--no-bytecode-cache" not in sys.argv
    cache_note = ("bytecode cached (untimed warm-up runs on 2,000 rows first)" if bytecode_cache
                  else "bytecode as the environment has it (PYTHONDONTWRITEBYTECODE=" +
                  os.environ.get("PYTHONDONTWRITEBYTECODE", "") + ")")
    tables = {}
    for label, rows, seed in () if only_536k else (("1M", 1_000_000, 1), ("10M", 10_000_000, 2)):
        path = work / f"graded_{label}.parquet"
        tables[label] = (path, write_synthetic_parquet(path, rows, seed=seed))
    records = synthetic_graded(n_queries=1400, embedders=("AM", "EM", "ES", "QM"), seed=2, answers=True,
                               max_rows=535_888)
    json_path, small_parquet = work / "graded_536k.json", work / "graded_536k.parquet"
    json_path.write_text(json.dumps(records))
    from ragdiag.data.graded_parquet import graded_arrow_table
    from ragdiag.io.writer import write_parquet

    write_parquet(small_parquet, graded_arrow_table(records))
    (work / "warm.json").write_text(json.dumps(records[:2000]))
    write_parquet(work / "warm.parquet", graded_arrow_table(records[:2000]))
    del records
    env = child_environment(work, bytecode_cache)
    for warm in ("warm.json", "warm.parquet"):  # untimed: the bytecode cache filled, the code paths run once
        run_once(work / warm, work / "o_warm.json", env, correlate_args(1))
    results = {"536k JSON": (measure(json_path, work / "o_json.json", repeats, env), 535_888, json_path),
               "536k Parquet": (measure(small_parquet, work / "o_pq.json", repeats, env), 535_888, small_parquet)}
    for label, (path, rows) in tables.items():
        results[f"{label} Parquet"] = (measure(path, work / f"o_{label}.json", repeats, env), rows, path)
    load_after = os.getloadavg()
    same = results["536k JSON"][0]["results"] == results["536k Parquet"][0]["results"]
    if only_536k:
        json_s, parquet_s = results["536k JSON"][0], results["536k Parquet"][0]
        print(f"536k rows, median of {repeats}: JSON {json_s['median']:.2f} s wall ({json_s['times']}), "
              f"{json_s['cpu']:.2f} s CPU; Parquet {parquet_s['median']:.2f} s wall ({parquet_s['times']}), "
              f"{parquet_s['cpu']:.2f} s CPU; JSON / Parquet (wall) "
              f"{json_s['median'] / parquet_s['median']:.2f}; results {'identical' if same else 'DIFFERENT'}; "
              f"{cache_note}; load average {load_before[0]:.1f} → {load_after[0]:.1f}")
        return
    per_row = {k: v[0]["median"] / v[1] for k, v in results.items()}
    growth = per_row["10M Parquet"] / per_row["1M Parquet"]
    lines = ["| table | rows | file size | wall s (median) | runs | peak RSS | µs per row |", "|---|---|---|---|---|---|---|"]
    for label, (m, rows, path) in results.items():
        lines.append(f"| {label} | {rows:,} | {path.stat().st_size / 2**20:.0f} MiB | {m['median']:.1f} | "
                     f"{', '.join(f'{t:.1f}' for t in m['times'])} | {m['peak_gib']:.2f} GiB | "
                     f"{per_row[label] * 1e6:.1f} |")
    text = (
        "## Parquet graded table\n\n"
        "`.venv/bin/python benchmarks/bench_parquet.py` — `ragdiag correlate` with the paper's defaults "
        "(F, E, T, nDCG; Spearman and Pearson; ratio segments, min 300; α grid l350^0.95) on synthetic graded "
        "tables (`tools/synthetic_parquet.py`, empty answer texts), each run a fresh CLI process (start-up, "
        f"reading and validating included; {cache_note}, as an installed package runs); wall time and peak RSS "
        "(`ru_maxrss` of the child, `resource.getrusage`) from the same runs, "
        f"median of {repeats}. The 535,888 rows (the full dataset's size) are the same table as JSON and as "
        f"Parquet; their correlation results are {'identical' if same else 'DIFFERENT'}.\n\n"
        + "\n".join(lines) + "\n\n"
        f"Targets: peak RSS ≤ 4 GiB at 10M rows: **{results['10M Parquet'][0]['peak_gib']:.2f} GiB**; wall time "
        f"growing no faster than linearly from 1M to 10M rows: time per row at 10M / time per row at 1M = "
        f"**{growth:.2f}** (≤ 1 is linear or better; rows × {tables['10M'][1] / tables['1M'][1]:.2f}, wall time × "
        f"{results['10M Parquet'][0]['median'] / results['1M Parquet'][0]['median']:.2f}). "
        f"536k rows: Parquet {results['536k Parquet'][0]['median']:.1f} s vs JSON "
        f"{results['536k JSON'][0]['median']:.1f} s "
        f"({results['536k JSON'][0]['median'] / results['536k Parquet'][0]['median']:.1f}× faster). "
        f"1-minute load average {load_before[0]:.1f} at the start and {load_after[0]:.1f} at the end: the machine "
        "was shared with other jobs (2 cores), so the times are pessimistic; the ratios are measured in the same run."
    )
    write_section("parquet", text)
    print(text)


if __name__ == "__main__":
    main()
