"""Re-running ``ragdiag index build`` on the same corpus: zero embedding calls, ≥ 20× faster.

Corpus: scifact/corpus.jsonl of the data folder (5,183 abstracts; ``ragdiag data get scifact``), embedder ``local`` (bundled
all-MiniLM-L6-v2), index ``hnsw:M=16,efConstruction=100,efSearch=64``, a fresh cache directory.
Each run is a separate ``ragdiag index build`` process timed end to end (interpreter start,
imports, model load when needed, embedding, faiss and BM25 builds, saving). One cold run
(empty cache; cold runs cost minutes, so one), then 3 warm runs (median).

Run: ``.venv/bin/python benchmarks/bench_index_build_cache.py [--data DIR]`` (benchmarks/_data.py:
``--data``, else ``$RAGDIAG_DATA`` / the user data dir, else ../shared/data).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._data import dataset  # noqa: E402
from benchmarks._report import write_section  # noqa: E402

CORPUS = dataset("scifact") / "corpus.jsonl"
SPEC = "hnsw:M=16,efConstruction=100,efSearch=64"


def build(cache: Path, out: Path) -> tuple[float, dict]:
    cmd = [str(ROOT / ".venv" / "bin" / "ragdiag"), "index", "build", "--corpus", str(CORPUS), "--embedder", "local",
           "--index-spec", SPEC, "--out-dir", str(out), "--cache-dir", str(cache)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    print(done.stdout.strip(), flush=True)
    return elapsed, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cache, out = Path(tmp) / "cache", Path(tmp) / "idx"
        cold_s, cold = build(cache, out)
        warm = [build(cache, out) for _ in range(3)]
    warm_s = statistics.median(w[0] for w in warm)
    calls = [w[1]["embedding"]["model_calls"] for w in warm]
    ratio = cold_s / warm_s
    md = f"""## Index build with the embedding cache (`benchmarks/bench_index_build_cache.py`)

`ragdiag index build --corpus scifact/corpus.jsonl --embedder local --index-spec {SPEC}` (5,183 passages), each run
a separate process timed end to end, fresh cache directory.

| run | wall s | embedding calls | texts embedded | cache hits | embed s | index s | BM25 s |
|---|---|---|---|---|---|---|---|
| cold (empty cache) | {cold_s:.1f} | {cold['embedding']['model_calls']} | {cold['embedding']['embedded']} | {cold['embedding']['cache_hits']} | {cold['timings_s']['embed']:.1f} | {cold['timings_s']['index']:.2f} | {cold['timings_s']['bm25']:.2f} |
""" + "".join(
        f"| warm {i + 1} | {s:.2f} | {r['embedding']['model_calls']} | {r['embedding']['embedded']} | "
        f"{r['embedding']['cache_hits']} | {r['timings_s']['embed']:.2f} | {r['timings_s']['index']:.2f} | "
        f"{r['timings_s']['bm25']:.2f} |\n"
        for i, (s, r) in enumerate(warm)
    ) + f"""
Warm runs make {max(calls)} embedding calls; median warm run {warm_s:.2f} s vs cold {cold_s:.1f} s:
**{ratio:.0f}× faster** (target ≥ 20×: {"met" if ratio >= 20 and max(calls) == 0 else "NOT met"}).
"""
    write_section("index_build_cache", md)
    print(md)


if __name__ == "__main__":
    main()
