"""Benchmark of adaptive search (paper 000 §6; ``ragdiag robustness --adaptive``) side by side with
fixed efSearch / nprobe at equal mean cost.

Data: 100,000 × 64 vectors from 100 Gaussian clusters (σ 0.8, ``numpy.random.default_rng(0)``)
with 1,000 queries from the same mixture (L2), and SciFact (5,183 abstracts, 1,109 queries,
all-MiniLM-L6-v2 through the embedding cache, cosine) when ``--scifact-cache DIR`` holds its
embeddings. Per index: first pass at the low setting, second pass at the high one for the queries
with the smallest rank-1..K score gap (share swept), against the fixed-setting curve at equal
distance computations; wall time = batch first pass + batch second pass on the re-searched
queries, median of ``REPEATS`` runs.

Run: ``.venv/bin/python benchmarks/bench_adaptive.py [--scifact-cache DIR]`` (writes its BENCHMARKS.md section).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import git_revision, write_section
from ragdiag.bench.adaptive import adaptive_study
from ragdiag.bench.recall import exact_ground_truth
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.indexes import build_index, prepare_vectors

K, DELTAS, REPEATS, SEED = 10, (0.5, 0.9), 7, 0
SHARES = (0.0, 0.1, 0.2, 0.3, 0.5)
CASES = [  # (dataset, spec, first, second)
    ("synthetic 100k", "hnsw:M=16,efConstruction=100,efSearch=16|24|32|48|64|128", 16, 128),
    ("synthetic 100k", "ivf:nlist=1024,nprobe=1|2|4|8|16|32", 1, 32),
    ("SciFact", "hnsw:M=16,efConstruction=100,efSearch=8|12|16|24|32|64", 8, 64),
]


def synthetic() -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((100, 64)) * 2.0
    base = (centers[rng.integers(0, 100, 100_000)] + 0.8 * rng.standard_normal((100_000, 64))).astype(np.float32)
    queries = (centers[rng.integers(0, 100, 1_000)] + 0.8 * rng.standard_normal((1_000, 64))).astype(np.float32)
    return base, queries, "l2"


def scifact(cache: Path) -> tuple[np.ndarray, np.ndarray, str]:
    from ragdiag.data.beir import load_corpus, load_queries
    from ragdiag.retrieval.embedders import load_embedder

    folder = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
    _, docs = load_corpus(folder / "corpus.jsonl")
    _, texts = load_queries(folder / "queries.jsonl")
    base = load_embedder("local", cache, role="passage", cache_mode="replay").encode(docs)
    queries = load_embedder("local", cache, role="query", cache_mode="replay").encode(texts)
    return prepare_vectors(base, "cosine", "scifact"), prepare_vectors(queries, "cosine", "scifact queries"), "cosine"


def _row(dataset: str, study: dict) -> list[str]:
    lines = []
    base_row = study["adaptive"][0]
    for row in study["adaptive"]:
        fixed = row["fixed_at_equal_ndis"]
        r = row["robustness"]
        gain = r["0.9"] - base_row["robustness"]["0.9"]
        extra = row["us_per_query"] - base_row["us_per_query"]
        fixed_cells = (f"{fixed['robustness']['0.5']:.3f} | {fixed['robustness']['0.9']:.3f} | {fixed['us_per_query']:.1f}"
                       if fixed else "beyond the fixed curve | – | –")
        lines.append(f"| {dataset} | {study['parameter']} {study['first']}→{study['second']} | "
                     f"{row['share_researched']:.0%} | {row['ndis_mean']:.0f} | {row['us_per_query']:.1f} ({extra:+.1f}) | "
                     f"{row['recall_mean']:.4f} | {r['0.5']:.3f} | {r['0.9']:.3f} ({gain:+.3f}) | {fixed_cells} | "
                     f"{row['random_same_share']['robustness']['0.9']:.3f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scifact-cache", type=Path, default=None)
    args = parser.parse_args()
    started = time.time()
    load = os.getloadavg()
    datasets = {"synthetic 100k": synthetic()}
    if args.scifact_cache:
        datasets["SciFact"] = scifact(args.scifact_cache)
    table, fixed_lines = [], []
    for dataset, text, first, second in CASES:
        if dataset not in datasets:
            continue
        base, queries, metric = datasets[dataset]
        spec = parse_index_spec(text)
        t0 = time.perf_counter()
        index = build_index(spec, base, metric, seed=SEED)
        build_s = time.perf_counter() - t0
        _, true_ids = exact_ground_truth(base, queries, K, metric)
        study = adaptive_study(index, spec, queries, true_ids, K, metric, first, second, DELTAS, SEED, REPEATS, SHARES)
        print(f"{dataset} {text}: built in {build_s:.1f} s", flush=True)
        table += _row(dataset, study)
        fixed_lines.append(f"- {dataset}, `{text}` ({metric}, build {build_s:.1f} s): " + "; ".join(
            f"{study['parameter']} {f[study['parameter']]}: {f['ndis_mean']:.0f} ndis, {f['us_per_query']:.1f} µs, "
            f"R-0.9 {f['robustness']['0.9']:.3f}" for f in study["fixed"]))
    end_load = os.getloadavg()
    markdown = "\n".join([
        "## Adaptive search (`benchmarks/bench_adaptive.py`)",
        "",
        f"Load average {load[0]:.1f} at the start, {end_load[0]:.1f} at the end (2 cores shared with other "
        f"jobs: wall times are noisy, distance computations are not). Revision {git_revision()}, K = {K}, "
        f"wall time = median of {REPEATS} batch runs, run took {time.time() - started:.0f} s.",
        "",
        "Adaptive: first pass at the low setting; the queries with the smallest rank-1..K score gap (the share "
        "given) searched again at the high setting. *Fixed at equal ndis*: the fixed-setting curve interpolated at "
        "the adaptive policy's mean distance computations. *Random*: the same share re-searched at random.",
        "",
        "| data | adaptive | re-searched | ndis/query | µs/query (vs first pass) | recall | R-0.5 | R-0.9 (gain) | "
        "fixed R-0.5 | fixed R-0.9 | fixed µs/query | random R-0.9 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *table,
        "",
        "Fixed settings measured:",
        *fixed_lines,
        "",
    ])
    write_section("adaptive", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
