"""The command runs whose outputs are kept as golden files (issue 17: the shape refactor must not
change one byte of a result). Each function writes its small deterministic inputs into the current
folder, runs the command with relative paths (so the paths recorded in the result are the same on
every machine) and returns the outputs it wrote. :func:`comparable` drops what a rerun may change:
the run record and the timing fields."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

from ragdiag.cli import app
from tests import golden

TIMING_KEYS = frozenset({"qps_batch", "qps_batch_runs", "latency_ms", "build_s", "seconds",
                         "timings_s", "qps", "latency", "us_per_query",
                         "p50", "p95", "p99", "speedup_vs_exact", "threads",  # threads: faiss OpenMP state of the process

                         "recommendation"})  # sweep's recommendation is the fastest point by measured QPS
ANN_SPECS = ("flat", "hnsw:M=4,efConstruction=16,efSearch=2|8", "ivf:nlist=8,nprobe=1|4")
LOCAL_SERVER = re.compile(r"http://127\.0\.0\.1:\d+")
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d9 0\n"


def comparable(doc: Any, rel_tol: float = golden.REL_TOL) -> Any:
    """``doc`` without the run record and the timing fields (at any depth), the test servers' ports
    (a fresh one on every run) written as PORT, floats within ``rel_tol``."""
    return golden.comparable(doc, TIMING_KEYS, rel_tol)


def _invoke(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def robustness_ann() -> dict[str, Path]:
    """robustness on seeded vectors: flat, an hnsw and an ivf sweep, with every optional analysis."""
    rng = np.random.default_rng(7)
    np.save("base.npy", rng.standard_normal((300, 8)).astype(np.float32))
    np.save("queries.npy", rng.standard_normal((30, 8)).astype(np.float32))
    specs = [arg for spec in ANN_SPECS for arg in ("--index-spec", spec)]
    _invoke(["robustness", "--base-vectors", "base.npy", "--query-vectors", "queries.npy", "--k", "5", *specs,
             "--metric", "l2", "--threads", "1", "--bootstrap", "200", "--latency-queries", "5", "--qps-repeats", "1",
             "--hardness", "--lid-k", "5", "--match-recall", "0.8", "--require", "recall>=0.5",
             "--adaptive", "2:16", "--out", "ann.json", "--per-query", "ann_per_query.jsonl"])
    return {"result": Path("ann.json"), "per_query": Path("ann_per_query.jsonl")}


def robustness_runs() -> dict[str, Path]:
    """robustness over two runs (TREC and jsonl) against TREC qrels."""
    Path("qrels.txt").write_text(QRELS)
    Path("good.trec").write_text("q1 Q0 d1 1 9.0 a\nq1 Q0 d2 2 8.0 a\nq1 Q0 d7 3 1.0 a\nq2 Q0 d3 1 5.0 a\n"
                                 "q2 Q0 d8 2 4.0 a\nq2 Q0 d5 3 3.0 a\n")
    Path("weak.jsonl").write_text(json.dumps({"query_id": "q1", "ids": ["d7", "d1", "d4"], "scores": [3, 2, 1]}) + "\n"
                                  + json.dumps({"query_id": "q2", "ids": ["d8", "d5", "d6"], "scores": [3, 2, 1]}) + "\n")
    _invoke(["robustness", "--run", "good.trec", "--run", "weak.jsonl", "--qrels", "qrels.txt", "--k", "2",
             "--bootstrap", "100", "--min-recall", "0.2", "--out", "runs.json", "--per-query", "runs_per_query.jsonl"])
    return {"result": Path("runs.json"), "per_query": Path("runs_per_query.jsonl")}


def sweep_synthetic(toy_url: str, embed_url: str) -> dict[str, Path]:
    """sweep on a small synthetic BEIR folder with the toy model (test server, not an LLM)."""
    from tests.sweep.synthetic_corpus import MODEL, write_corpus

    write_corpus(Path("synthetic"), n_docs=80, n_queries=10)
    _invoke(["sweep", "--corpus", "synthetic", "--index", "ivf:nlist=8,nprobe=1|8", "--index", "hnsw:M=4,efConstruction=8,efSearch=1|16",
             "--k", "3", "--bootstrap", "100", "--delta", "0.2,0.6,1.0", "--out-dir", "swept", "--embedder", f"openai:{MODEL}",
             "--embed-base-url", embed_url, "--model", "toy", "--base-url", toy_url, "--cache-dir", "cache", "--no-progress",
             "--latency-queries", "5", "--qps-repeats", "1"])
    return {"result": Path("swept/sweep.json"), "per_query": Path("swept/per_query.jsonl")}


def index_and_retrieve(embed_url: str) -> dict[str, Path]:
    """index build (dense hnsw through the embeddings test server, BM25) then retrieve in the three modes."""
    docs = [("d1", "Cats", "Cats purr and sleep most of the day."), ("d2", "Dogs", "Dogs bark at the postman."),
            ("d3", "Volcanoes", "Lava flows from erupting volcanoes in Iceland."),
            ("d4", "Tea", "Green tea contains caffeine and antioxidants."), ("d5", "Rivers", "The Seine flows through Paris.")]
    Path("corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs))
    Path("queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": x}) + "\n" for i, x in
                                             [("q1", "why do dogs bark"), ("q2", "volcano lava"), ("q3", "green tea")]))
    _invoke(["index", "build", "--corpus", "corpus.jsonl", "--embedder", "openai:m", "--base-url", embed_url,
             "--index-spec", "hnsw:M=8,efSearch=16|32", "--out-dir", "idx", "--cache-dir", "cache"])
    outputs = {"manifest": Path("idx/manifest.json")}
    for mode in ("dense", "bm25", "hybrid"):
        _invoke(["retrieve", "--index-dir", "idx", "--queries", "queries.jsonl", "--k", "3", "--mode", mode,
                 "--out", f"{mode}.jsonl", "--base-url", embed_url, "--cache-dir", "cache"])
        outputs[mode], outputs[f"{mode}_meta"] = Path(f"{mode}.jsonl"), Path(f"{mode}.jsonl.meta.json")
    return outputs
