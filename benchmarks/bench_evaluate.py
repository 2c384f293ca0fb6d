"""Benchmark of ``ragdiag evaluate``: 3 runs × 10,000 queries × depth 100, 1,000 bootstrap replicates.

Synthetic data (seeded): every query has a judged pool of 40 passages with grades 1–5 drawn from a
per-query mix (some pools without grade 5, some without 4 or 5); each run ranks 100 passages, a
run-specific share of them judged. ragdiag reads the runs as run.jsonl and the qrels as a BEIR TSV;
the baseline reads the same runs as TREC files.

* ragdiag: the CLI as a subprocess (start-up and file parsing included), all 13 metrics at
  K = 10, 20, 30, 1,000 bootstrap replicates, 3 pairwise comparisons, JSON out; median of 3.
* baseline, same run: ir_measures alone (its own TREC readers, ``calc_aggregate``) on the same
  files for the 5 standard metrics at the same K, no intervals — what a user runs today; median of 3.

Usage: .venv/bin/python benchmarks/bench_evaluate.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, median_time, write_section  # noqa: E402

RAGDIAG = str(ROOT / ".venv" / "bin" / "ragdiag")
N_QUERIES, DEPTH, POOL, REPLICATES, REPEATS = 10_000, 100, 40, 1000, 3
BASELINE = """
import sys, ir_measures
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
measures = [ir_measures.parse_measure(m.format(k=k)) for m in ("nDCG@{k}", "R(rel=3)@{k}", "RR(rel=3)@{k}", "AP(rel=3)@{k}", "P(rel=3)@{k}") for k in (10, 20, 30)]
for run in sys.argv[2:]:
    ir_measures.calc_aggregate(measures, qrels, ir_measures.read_trec_run(run))
"""


def make_data(folder: Path, seed: int = 0) -> tuple[Path, Path, list[Path]]:
    """qrels.tsv (BEIR, grades 1–5), qrels.trec (grade − 1, for the ir_measures baseline) and 3 runs,
    each as ragdiag run.jsonl (read by ragdiag) and as a TREC file (read by the baseline)."""
    rng = np.random.default_rng(seed)
    mixes = np.array([[0.5, 0.2, 0.15, 0.1, 0.05], [0.55, 0.2, 0.15, 0.1, 0.0], [0.6, 0.3, 0.1, 0.0, 0.0]])
    mix = mixes[rng.choice(3, size=N_QUERIES, p=[0.7, 0.2, 0.1])]
    grades = np.stack([rng.choice(5, size=POOL, p=m) + 1 for m in mix])
    beir, trec = ["query-id\tcorpus-id\tscore\n"], []
    for q in range(N_QUERIES):
        for d in range(POOL):
            beir.append(f"q{q}\tq{q}d{d}\t{grades[q, d]}\n")
            trec.append(f"q{q} 0 q{q}d{d} {grades[q, d] - 1}\n")
    qrels, qrels_trec = folder / "qrels.tsv", folder / "qrels.trec"
    qrels.write_text("".join(beir))
    qrels_trec.write_text("".join(trec))
    runs = []
    for r, judged_share in enumerate((0.3, 0.4, 0.5)):
        lines = []
        for q in range(N_QUERIES):
            judged = rng.permutation(POOL)[: int(DEPTH * judged_share)]
            docs = [f"q{q}d{d}" for d in judged] + [f"q{q}u{u}" for u in range(DEPTH - len(judged))]
            order = rng.permutation(len(docs))
            ranked = [docs[i] for i in order]
            lines.append((f"q{q}", ranked))
        (folder / f"run{r}.trec").write_text("".join(
            f"{q} Q0 {d} {rank} {DEPTH - rank} run{r}\n" for q, ranked in lines for rank, d in enumerate(ranked, start=1)))
        path = folder / f"run{r}.jsonl"
        path.write_text("".join(json.dumps({"query_id": q, "ids": ranked, "scores": list(range(DEPTH, 0, -1))}) + "\n"
                                for q, ranked in lines))
        runs.append(path)
    return qrels, qrels_trec, runs


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        qrels, qrels_trec, runs = make_data(folder)
        print(f"data written in {time.perf_counter() - start:.1f}s", file=sys.stderr)
        args = [RAGDIAG, "evaluate", *[a for r in runs for a in ("--run", str(r))], "--qrels", str(qrels),
                "--k", "10,20,30", "--pool-depth", str(DEPTH), "--bootstrap", str(REPLICATES), "--seed", "0",
                "--format", "json", "--out", str(folder / "result.json")]
        ours, ours_all = median_time(lambda: subprocess.run(args, check=True, stdout=subprocess.DEVNULL), REPEATS)
        graded_args = [*args, "--metrics", "ra_nwg,proc,pct_proc,nrecall4,nrecall5,hit,harm,unjudged"]
        graded, graded_all = median_time(lambda: subprocess.run(graded_args, check=True, stdout=subprocess.DEVNULL), REPEATS)
        base_args = [sys.executable, "-c", BASELINE, str(qrels_trec), *(str(r.with_suffix(".trec")) for r in runs)]
        base, base_all = median_time(lambda: subprocess.run(base_args, check=True, stdout=subprocess.DEVNULL), REPEATS)
    load = os.getloadavg()[0]
    fmt = ", ".join(f"{s:.2f}" for s in ours_all)
    fmt_base = ", ".join(f"{s:.2f}" for s in base_all)
    fmt_graded = ", ".join(f"{s:.2f}" for s in graded_all)
    markdown = f"""## evaluate: 3 runs × 10,000 queries × depth 100, 1,000 bootstrap replicates

`.venv/bin/python benchmarks/bench_evaluate.py` — synthetic seeded data (pools of 40 graded passages;
runs of 100 passages; ragdiag reads run.jsonl, ir_measures the same runs as TREC files). ragdiag: the CLI as a subprocess, all 13 metrics (8 graded
utility + 5 standard through ir_measures) at K = 10, 20, 30, 95% bootstrap intervals from 1,000
replicates, 3 paired comparisons, JSON out. Baseline: ir_measures alone on the same files, 5 standard
metrics at the same K, no intervals.

| | median wall time (s) | samples (s) |
| --- | ---: | --- |
| `ragdiag evaluate` (13 metrics × 3 K × 3 runs + intervals + pairs) | {ours:.2f} | {fmt} |
| `ragdiag evaluate --metrics` the 8 graded utility metrics only (+ intervals + pairs) | {graded:.2f} | {fmt_graded} |
| ir_measures alone (5 metrics × 3 K × 3 runs, no intervals) | {base:.2f} | {fmt_base} |
| ratio ragdiag / ir_measures | {ours / base:.2f}× | |

Target ≤ 10 s on 2 cores: {"met" if ours <= 10 else "**not met as measured here.**"} Load average at the end of the
run: {load:.1f} (when other jobs share the cores, all timings are inflated; the ratio is from the same run).
"""
    write_section("evaluate", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
