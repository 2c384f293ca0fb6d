"""Benchmark of ``compare --sequential`` on real per-query differences: false alarms under watching,
queries judged until the decision, and power against the fixed design.

Data: per-query nDCG@10, Recall@10, Recall@100, MAP@10 and MRR@10 of two real BM25 configurations
(ragdiag's BM25, the ``lucene`` and the ``okapi`` variants, title + text, top 100) on SciFact (300 test
queries) and on the MS MARCO passage sample (its judged dev queries), scored by evaluate's per-query
computation. Their per-query differences d (one row a query, five metrics) are the shape of a real
change; each replay draws a stream of rows with replacement (seeded) and sets its mean:

- **A/A**: (d − d̄) with a random sign per row (mean 0, the null's boundary at --max-drop 0);
- **drop of c × MDE**: (d − d̄) − c·MDE_j, MDE_j per metric the drop the fixed design detects with power
  0.8 at n_fixed = 200 queries and level α/5 (Holm's first step, the level a family of 5 decides at):
  MDE_j = (z_{1−α/5} + z_{0.8})·sd_j/√200.

Each stream is 1.5 × n_fixed long and turned into base/new values in [0, 1] with new − base = the
drawn gain, then given to the gate itself (:func:`ragdiag.compare.sequential_gate.run`, a look after
every query, e-Holm over the 5 metrics, --max-drop 0, α 0.05). Reported: the family-wise false-alarm
rate (A/A: any metric declared a regression at any look), the median queries read until every metric
was decided (as a share of n_fixed), and the share of replays in which every metric was found a
regression by 1.5 × n_fixed (against the fixed design's 0.8). Beside it, the fixed-n paired t with Holm
looked at after every query (from the 5th): its family-wise false-alarm rate under the same watching.

Usage: python benchmarks/bench_sequential.py [--replays 1000]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import WORKPLACE
from _report import ROOT, write_section

sys.path.insert(0, str(ROOT))
from ragdiag.compare.inputs import Paired, read_runs
from ragdiag.compare.sequential_gate import SequentialOptions, run

METRICS = [("ndcg", 10), ("recall", 10), ("recall", 100), ("map", 10), ("mrr", 10)]
N_FIXED, ALPHA, POWER = 200, 0.05, 0.8


def per_query_differences(folder: Path, split: str) -> np.ndarray:
    """(queries, 5) differences okapi − lucene of the five metrics on the judged queries."""
    from ragdiag.data.beir import load_corpus, load_queries
    from ragdiag.data.qrels_runs import read_qrels, run_file_text
    from ragdiag.io.writer import write_text
    from ragdiag.retrieval.bm25 import BM25Index, parse_bm25_spec

    ids, texts = load_corpus(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    judged = read_qrels(qrels_path)
    queries = [(q, t) for q, t in zip(*load_queries(folder / "queries.jsonl")) if q in judged]
    paths = []
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("lucene", "okapi"):
            index = BM25Index.build(texts, parse_bm25_spec(variant))
            run_rows = {}
            for query_id, text in queries:
                rows, scores = index.top_k(text, 100)
                run_rows[query_id] = [(ids[r], float(s)) for r, s in zip(rows, scores)]
            path = Path(tmp) / f"{variant}.jsonl"
            write_text(path, run_file_text(run_rows))
            paths.append(path)
        sides, _, order = read_runs(paths[0], paths[1], qrels_path, METRICS)
    base, new = sides[str(paths[0])], sides[str(paths[1])]
    common = [q for q in order if q in base.row and q in new.row]
    return np.array([new.matrix[new.row[q]] - base.matrix[base.row[q]] for q in common])


def _paired(gains: np.ndarray, names: list[str]) -> Paired:
    gains = np.clip(gains, -1.0, 1.0)
    base = np.maximum(0.0, -gains)
    return Paired("runs", [str(i) for i in range(len(gains))], names, base, base + gains, [False] * len(names), {})


def watched_t_false_alarm(gains: np.ndarray) -> bool:
    """Fixed-n paired t with Holm over the metrics, looked at after every query from the 5th."""
    from scipy.stats import t as student

    n = np.arange(1, len(gains) + 1)[:, None]
    mean = np.cumsum(gains, axis=0) / n
    var = np.maximum(np.cumsum(gains**2, axis=0) / n - mean**2, 0) * n / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = student.cdf(mean / np.sqrt(var / n), np.maximum(n - 1, 1))[4:]
    p = np.where(np.isnan(p), 1.0, p)
    m = gains.shape[1]
    ordered = np.sort(p, axis=1)
    holm = ordered <= ALPHA / (m - np.arange(m))  # Holm rejects at least the first when its step holds
    return bool(holm[:, 0].any())


def scenario(diffs: np.ndarray, names: list[str], shift: np.ndarray | None, replays: int, sequence: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    length = int(1.5 * N_FIXED)
    centred = diffs - diffs.mean(axis=0)
    alarms = watched = 0
    stops, decided_all = [], 0
    for r in range(replays):
        rows = centred[rng.integers(0, len(diffs), length)]
        rows = rows * rng.choice([-1.0, 1.0], (length, 1)) if shift is None else rows - shift
        comparisons, summary = run(_paired(rows, names), ALPHA, 0.0, r, SequentialOptions(sequence=sequence))
        decisions = [mc.decision for mc in comparisons]
        if shift is None:
            alarms += "regression" in decisions
            watched += watched_t_false_alarm(np.clip(rows, -1, 1))
        else:
            stops.append(summary.stopped_at)
            decided_all += all(d == "regression" for d in decisions)
    if shift is None:
        return {"alarm": alarms / replays, "watched_t": watched / replays}
    return {"median_stop": float(np.median(stops)), "power": decided_all / replays}


def wilson(k: float, n: int) -> str:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(round(k * n), n, 0.05, method="wilson")
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=1000, help="replays per cell of the asymptotic sequence")
    parser.add_argument("--betting-replays", type=int, default=100, help="replays per cell of the (slower) betting sequence")
    args = parser.parse_args()
    from scipy.stats import norm

    sets = [("SciFact", WORKPLACE / "scifact", "test"), ("MS MARCO sample", WORKPLACE / "msmarco-passage-sample", "dev")]
    lines = []
    load = os.getloadavg()[0]
    start = time.time()
    for name, folder, split in sets:
        if not (folder / "corpus.jsonl").is_file():
            print(f"skipping {name}: {folder} not found")
            continue
        if not (folder / "qrels" / f"{split}.tsv").is_file():
            split = "test"
        diffs = per_query_differences(folder, split)
        varying = diffs.std(axis=0) > 0
        if not varying.all():
            print(f"{name}: left out {[f'{m}@{k}' for (m, k), v in zip(METRICS, varying) if not v]}: the two runs never differ on them")
        names = [f"{m}@{k}" for (m, k), v in zip(METRICS, varying) if v]
        diffs = diffs[:, varying]
        z = norm.ppf(1 - ALPHA / len(names)) + norm.ppf(POWER)
        mde = z * diffs.std(axis=0, ddof=1) / math.sqrt(N_FIXED)
        for sequence, replays in (("asymptotic", args.replays), ("betting", args.betting_replays)):
            aa = scenario(diffs, names, None, replays, sequence, 1)
            two = scenario(diffs, names, 2 * mde, replays, sequence, 2)
            four = scenario(diffs, names, 4 * mde, replays, sequence, 3)
            one = scenario(diffs, names, mde, replays, sequence, 4)
            lines.append(f"| {name} ({len(diffs)} queries, {len(names)} metrics) | {sequence} ({replays} replays) | {100 * aa['alarm']:.1f}% {wilson(aa['alarm'], replays)} | "
                         f"{100 * aa['watched_t']:.1f}% | {two['median_stop']:.0f} ({100 * two['median_stop'] / N_FIXED:.0f}%) | "
                         f"{four['median_stop']:.0f} ({100 * four['median_stop'] / N_FIXED:.0f}%) | "
                         f"{100 * one['power']:.1f}% ({100 * one['power'] / POWER:.0f}% of 80%) |")
            print(lines[-1], flush=True)
    minutes = (time.time() - start) / 60
    table = "\n".join(["| data | sequence | A/A family-wise false alarms, watched every query | fixed-n t + Holm watched every query | "
                       "median queries to decide, drop 2×MDE (share of n_fixed 200) | … drop 4×MDE | "
                       "power by 1.5 × n_fixed at drop = MDE |", "|---|---|--:|--:|--:|--:|--:|", *lines])
    write_section("sequential", f"""## compare --sequential: watched gates on real per-query differences (`benchmarks/bench_sequential.py`)

`.venv/bin/python benchmarks/bench_sequential.py --replays {args.replays} --betting-replays {args.betting_replays}` — seeded replays per cell as the table says; the
per-query differences of two real BM25 configurations (lucene vs okapi, five metrics), recentred and
shifted as the script's docstring says; the gate itself with a look after every query, e-Holm over the
5 metrics, α 0.05, --max-drop 0; n_fixed = 200 is the fixed design's n for the MDE at level α/5 and power
0.8. False-alarm intervals: Wilson 95%. 1-minute load average {load:.1f} at the start; {minutes:.1f} min.

{table}
""")


if __name__ == "__main__":
    main()
