"""``--engine ray`` against the local engine on one machine: what Ray costs, and what a worker does.

Measured (all with a real local Ray instance, ``ray.init(num_cpus=2)``, no dashboard):

1. Ray start-up: ``ray.init`` of a local instance, then ``ray.shutdown`` (median of 3).
2. Per-batch overhead: a torch-free embedder (``tests/engine/hash_embedder.py``, microseconds per
   batch) through 1 Ray worker, batches of 8 texts: the slope between 10 and 210 batches, so the fixed
   cost (dataset start, actor start) is separated from the cost of one more batch (median of 3 each).
3. SciFact (5,183 passages), embedder ``local`` (bundled all-MiniLM-L6-v2), no cache, model load
   included on both sides: the local engine vs ``--engine ray --ray-workers 2``, end to end
   (median of 2: each run costs minutes on this machine); the two engines' vectors are compared
   (max |difference|). Per-worker throughput is the steady rate on Ray (passages after the first
   batch / time from the first batch to the last) divided by the workers.
4. A projection (labelled as such): hours for 10 million chunks on N workers at the measured
   per-worker throughput. A GPU worker is far faster than a CPU core: run this benchmark on one GPU
   node (``--gpus-per-worker 1``) to get the figure to put in the same formula.

Run: ``.venv/bin/python benchmarks/bench_ray.py [--data DIR] [--passages N] [--quick]`` (``--passages``:
the first N SciFact passages only, for a machine where all 5,183 take too long; ``--quick``: 1,000
passages, one repeat, nothing written).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._data import dataset  # noqa: E402
from benchmarks._report import median_time, write_section  # noqa: E402

QUICK = "--quick" in sys.argv
PASSAGES = int(sys.argv[sys.argv.index("--passages") + 1]) if "--passages" in sys.argv else None
PROJECTED_CHUNKS = 10_000_000


def startup_seconds(repeats: int = 3) -> float:
    import ray

    def once() -> None:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        ray.shutdown()

    return median_time(once, repeats)[0]


def batch_overhead(repeats: int = 3) -> tuple[float, float]:
    """(fixed seconds, seconds per extra batch) of the Ray path with a no-cost embedder, 1 worker."""
    from ragdiag.engine.settings import EngineSettings
    from tests.engine.hash_embedder import HashEmbedder

    def timed(batches: int) -> float:
        texts = [f"text {i}" for i in range(8 * batches)]
        with EngineSettings(engine="ray", ray_workers=1).activate():
            return median_time(lambda: HashEmbedder(batch_size=8).encode(texts), repeats)[0]

    small, large = timed(10), timed(210)
    per_batch = (large - small) / 200
    return small - 10 * per_batch, per_batch


def scifact_runs(texts: list[str], repeats: int) -> dict:
    from ragdiag.engine.settings import EngineSettings
    from ragdiag.retrieval.embedders import load_embedder
    from ragdiag.retrieval.ray_embed import embed_batches_on_ray

    def local() -> np.ndarray:
        return load_embedder("local", use_cache=False).encode(texts)

    steady: list[float] = []
    vectors: dict[str, np.ndarray] = {}

    def on_ray() -> np.ndarray:
        embedder = load_embedder("local", use_cache=False)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows = [order[s:s + embedder.batch_size] for s in range(0, len(texts), embedder.batch_size)]
        out = np.zeros((len(texts), 384), dtype=np.float32)
        stamps: list[tuple[float, int]] = []

        def store(picked: list[int], raw: np.ndarray) -> None:
            vec = np.asarray(raw, dtype=np.float32)
            out[picked] = vec / np.linalg.norm(vec, axis=1, keepdims=True)
            stamps.append((time.perf_counter(), len(picked)))

        with EngineSettings(engine="ray", ray_workers=2).activate():
            embed_batches_on_ray(embedder, [[texts[i] for i in r] for r in rows], rows, store)
        after_first = sum(n for _, n in stamps[1:])
        steady.append(after_first / max(stamps[-1][0] - stamps[0][0], 1e-9))
        return out

    def keep(name, fn):
        def run() -> None:
            vectors[name] = fn()
        return run

    t_local = median_time(keep("local", local), repeats)[0]
    t_ray = median_time(keep("ray", on_ray), repeats)[0]
    # the Ray path's vectors normalised as the embedder does (Embedder._normalise)
    diff = float(np.abs(vectors["ray"] - vectors["local"]).max())
    return {"local": t_local, "ray": t_ray, "steady": statistics.median(steady), "diff": diff}


def main() -> None:
    import ray

    from ragdiag.data.beir import load_corpus

    _, texts = load_corpus(dataset("scifact") / "corpus.jsonl")
    texts = texts[:1000] if QUICK else texts[:PASSAGES] if PASSAGES else texts
    repeats = 1 if QUICK else 2
    start = startup_seconds(1 if QUICK else 3)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        fixed, per_batch = batch_overhead(1 if QUICK else 3)
        sci = scifact_runs(texts, repeats)
    finally:
        ray.shutdown()
    per_worker = sci["steady"] / 2
    ratio = sci["ray"] / sci["local"]
    lines = [
        "## Ray engine (`--engine ray`)", "",
        "`benchmarks/bench_ray.py`: a real local Ray instance (`ray.init(num_cpus=2)`) on this 2-core machine, "
        "where Ray cannot add cores: what the engine costs and what one worker does.", "",
        "| measure | value |", "|---|---|",
        f"| Ray start-up (`ray.init` of a local instance + `ray.shutdown`, median of 3) | {start:.1f} s |",
        f"| fixed cost of one Ray embedding run (dataset + 1 actor start, no-cost embedder) | {fixed:.1f} s |",
        f"| overhead per batch (slope 10 → 210 batches of 8, no-cost embedder, 1 worker) | "
        f"{f'{per_batch * 1000:.0f} ms' if per_batch > 0 else f'below the noise here (slope {per_batch * 1000:.0f} ms)'} |",
        f"| SciFact ({len(texts):,} {'passages' if len(texts) == 5183 else 'first passages of 5,183'}), local engine, end to end with model load (median of {repeats}) | {sci['local']:.1f} s |",
        f"| SciFact, `--engine ray --ray-workers 2`, end to end with model load in each worker (median of {repeats}) | {sci['ray']:.1f} s |",
        f"| ratio ray / local (target ≤ 1.5×) | {ratio:.2f}× {'(met)' if ratio <= 1.5 else '(not met)'} |",
        f"| max \\|ray − local\\| over the SciFact vectors | {sci['diff']:.1e} |",
        f"| steady throughput per worker (1 CPU each, after the first batch) | {per_worker:.0f} passages/s |",
        "", f"**Projection** (computed, not measured): {PROJECTED_CHUNKS:,} chunks at the measured "
        f"{per_worker:.0f} passages/s per worker, plus the fixed start-up above:", "",
        "| workers | hours |", "|---|---|",
        *[f"| {n} | {PROJECTED_CHUNKS / (per_worker * n) / 3600 + fixed / 3600:.1f} |" for n in (1, 8, 32, 128)],
        "", "A worker here is one CPU core of this machine; a GPU worker (`--gpus-per-worker 1`) embeds many times "
        "faster: run this benchmark on one GPU node and put its per-worker figure in the same formula "
        "(hours = chunks / (workers × passages/s) / 3600). The machine is shared with other jobs while measured, "
        "so absolute times are high; the ratio is measured in the same run."
        + (" A ratio below 1 here means Ray's worker processes got a larger share of the contended CPU than one "
           "local process did, not that Ray adds compute on 2 cores." if ratio < 1 else ""),
    ]
    text = "\n".join(lines)
    print(text)
    if not QUICK:
        write_section("ray", text)


if __name__ == "__main__":
    main()
