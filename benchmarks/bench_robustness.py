"""Benchmark of ``ragdiag robustness``'s index sweep on 100,000 × 384 clustered vectors.

1. Wall time of the whole sweep (exact ground truth, HNSW build + 4 efSearch points, IVF
   build + 4 nprobe points, each point with batch QPS and 1,000 single-query latencies);
   target ≤ 5 minutes on 2 cores.
2. ragdiag's search path (``set_search_params`` + ``indexes.search``) against bare
   ``index.search`` on the same index, interleaved, median of repeats; target ≥ 90% of QPS.
3. Index memory: RSS growth while building each index against the serialized size.

Run: ``.venv/bin/python benchmarks/bench_robustness.py`` (writes its BENCHMARKS.md section).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import write_section
from ragdiag.bench.index_sweep import SweepOptions, run_sweep
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.indexes import build_index, index_bytes, search, set_search_params

N, DIM, NQ, K, SEED = 100_000, 384, 1_000, 10, 0
SPECS = ["hnsw:M=16,efConstruction=100,efSearch=16|32|64|128", "ivf:nlist=1024,nprobe=1|4|16|64"]


def clustered(rng: np.random.Generator, n: int, centers: np.ndarray) -> np.ndarray:
    """Gaussian mixture: a random centre plus isotropic noise (σ = 0.6 per coordinate)."""
    return (centers[rng.integers(0, len(centers), n)] + 0.6 * rng.standard_normal((n, DIM))).astype(np.float32)


def rss_bytes() -> int:
    """Resident set size after returning freed heap pages to the OS (glibc ``malloc_trim``)."""
    import ctypes

    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def bare_vs_ragdiag(index, queries: np.ndarray, spec_params: dict, repeats: int = 7) -> tuple[float, float]:
    """Median QPS of bare faiss calls and of ragdiag's search path, interleaved."""
    import faiss

    bare, ours = [], []
    search(index, queries[:32], K)
    for _ in range(repeats):
        for name, value in spec_params.items():  # bare faiss: set the attribute, call index.search
            if name == "efSearch":
                faiss.downcast_index(index).hnsw.efSearch = value
            else:
                faiss.extract_index_ivf(index).nprobe = value
        start = time.perf_counter()
        index.search(queries, K)
        bare.append(len(queries) / (time.perf_counter() - start))
        start = time.perf_counter()
        set_search_params(index, spec_params)
        search(index, queries, K)
        ours.append(len(queries) / (time.perf_counter() - start))
    return statistics.median(bare), statistics.median(ours)


def main() -> None:
    import faiss

    rng = np.random.default_rng(SEED)
    centers = rng.standard_normal((1000, DIM)).astype(np.float32)
    base, queries = clustered(rng, N, centers), clustered(rng, NQ, centers)
    specs = [parse_index_spec(s) for s in SPECS]
    start = time.perf_counter()
    points, _, _ = run_sweep(base, queries, specs, SweepOptions(k=K, metric="l2", latency_queries=NQ, seed=SEED))
    sweep_s = time.perf_counter() - start
    rows = []
    for p in points:
        params = ",".join(f"{a}={b}" for a, b in p["params"].items())
        rob = p["robustness"]
        rows.append(
            f"| {p['index']} | {params} | {p['recall_mean']:.4f} | {rob['0.5']:.4f} | {rob['0.9']:.4f} | "
            f"{p['zero_recall_queries']} | {p['qps_batch']['median']:.0f} | {p['latency_ms']['p50']:.3f} | "
            f"{p['latency_ms']['p99']:.3f} | {p['build_s']:.1f} | {p['index_bytes'] / 2**20:.1f} |"
        )
    print(f"sweep: {sweep_s:.1f}s", flush=True)

    checks = []
    for spec, point_params in ((specs[0], {"efSearch": 64}), (specs[1], {"nprobe": 16})):
        before = rss_bytes()
        index = build_index(spec, base, "l2", seed=SEED)
        grown = rss_bytes() - before
        size = index_bytes(index)
        bare, ours = bare_vs_ragdiag(index, queries, point_params)
        checks.append((spec.kind, point_params, bare, ours, grown, size))
        del index
    qps_rows = [
        f"| {kind} | {','.join(f'{a}={b}' for a, b in params.items())} | {bare:.0f} | {ours:.0f} | {ours / bare:.1%} |"
        for kind, params, bare, ours, _, _ in checks
    ]
    mem_rows = [
        f"| {kind} | {size / 2**20:.1f} | {grown / 2**20:.1f} | {grown / size:.2f} |"
        for kind, _, _, _, grown, size in checks
    ]
    ok_time = sweep_s <= 300
    ok_qps = all(ours / bare >= 0.9 for _, _, bare, ours, _, _ in checks)
    md = f"""## Robustness sweep (`benchmarks/bench_robustness.py`)

{N:,} × {DIM} float32 clustered vectors (1,000 Gaussian centres, σ = 0.6), {NQ:,} queries, K = {K}, L2,
seed {SEED}, faiss threads = {faiss.omp_get_max_threads()}. Ground truth: exact search (flat).
Each point: batch QPS (median of 3), single-query latency over all {NQ:,} queries after 32 warm-up queries.

**Whole sweep (ground truth + 2 builds + 8 operating points): {sweep_s:.1f} s** — target ≤ 300 s: {"met" if ok_time else "NOT met"}.

| index | params | recall@10 | R-0.5@10 | R-0.9@10 | zero-recall queries | QPS (batch) | p50 ms | p99 ms | build s | MiB (serialized) |
|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

ragdiag search path vs bare `index.search` on the same index (batch of {NQ:,} queries, interleaved,
median of 7) — target ≥ 90%: {"met" if ok_qps else "NOT met"}.

| index | params | bare faiss QPS | ragdiag QPS | ratio |
|---|---|---|---|---|
{chr(10).join(qps_rows)}

Index memory: serialized size (`faiss.serialize_index`, reported as `index_bytes`) against the growth
of the process RSS while building the same index.

| index | serialized MiB | RSS growth MiB | RSS / serialized |
|---|---|---|---|
{chr(10).join(mem_rows)}
"""
    md += f"\nLoad average (1 min) at the end of the run: {os.getloadavg()[0]:.1f} (the machine is shared; 2 cores).\n"
    write_section("robustness", md)
    print(md)


if __name__ == "__main__":
    main()
