"""Real retrieval configurations over a BEIR folder (BM25 through bm25s, no embedding), written as
run.jsonl files: the systems ``testset certify`` orders in the SciFact test and in
``benchmarks/bench_testset.py``: twelve with titles (SciFact), eleven without (the MS MARCO sample:
no title-only or body-only run; a second truncation and an RRF of two BM25 variants instead). Dense
retrieval is left out: embedding these corpora takes minutes to an hour on this machine."""

from __future__ import annotations

import json
from pathlib import Path

from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels, run_file_text
from ragdiag.retrieval.bm25 import Bm25Config, BM25Index
from ragdiag.retrieval.fusion import reciprocal_rank_fusion
from tests.compare.make_scifact_scores import shared_scifact

__all__ = ["build_runs", "degraded_qrels", "shared_scifact"]
DEPTH = 100


def _bodies(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """(ids, titles, texts) of the corpus."""
    ids, titles, texts = [], [], []
    for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").split("\n"):  # not splitlines: texts hold U+2028
        if line.strip():
            record = json.loads(line)
            ids.append(str(record["_id"]))
            titles.append(record.get("title") or "")
            texts.append(record["text"])
    return ids, titles, texts


def build_runs(folder: Path, out: Path, qrels: Path | None = None) -> list[Path]:
    """Write one run.jsonl per configuration into ``out`` (the judged queries of ``qrels``, default
    the folder's qrels/test.tsv)."""
    ids, titles, bodies = _bodies(folder)
    full = load_corpus(folder)[1]
    judged = read_qrels(qrels or folder / "qrels" / "test.tsv")
    queries = [(q, t) for q, t in zip(*load_queries(folder / "queries.jsonl"), strict=True) if q in judged]
    short = [" ".join(t.split()[:32]) for t in full]
    has_titles = any(t.strip() for t in titles)
    configs = {
        "bm25-lucene": (full, Bm25Config()),
        "bm25-nostem": (full, Bm25Config(stem=False)),
        "bm25-okapi": (full, Bm25Config(variant="okapi", k1=1.5, b=0.75)),
        "bm25-k1.2-b.75": (full, Bm25Config(k1=1.2, b=0.75)),
        "bm25-k0.5-b.3": (full, Bm25Config(k1=0.5, b=0.3)),
        "bm25-k2-b.9": (full, Bm25Config(k1=2.0, b=0.9)),
        "bm25-b0": (full, Bm25Config(b=0.0)),
        **({"title-only": (titles, Bm25Config()), "body-only": (bodies, Bm25Config())} if has_titles
           else {"truncated-16": ([" ".join(t.split()[:16]) for t in full], Bm25Config())}),
        "truncated-32": (short, Bm25Config()),
    }
    rankings: dict[str, dict[str, list[str]]] = {}
    paths = []
    for name, (texts, config) in configs.items():
        index = BM25Index.build(texts, config)
        run = {}
        for query_id, text in queries:
            rows, scores = index.top_k(text, DEPTH)
            run[query_id] = [(ids[r], float(s)) for r, s in zip(rows, scores, strict=True)]
        rankings[name] = {q: [d for d, _ in pairs] for q, pairs in run.items()}
        paths.append(_write(out / f"{name}.jsonl", run))
    first = ("rrf-lucene+title", ("bm25-lucene", "title-only")) if has_titles else ("rrf-lucene+okapi", ("bm25-lucene", "bm25-okapi"))
    for name, (x, y) in dict([first, ("rrf-nostem+truncated", ("bm25-nostem", "truncated-32"))]).items():
        run = {q: [(d, s) for d, s in reciprocal_rank_fusion([rankings[x][q], rankings[y][q]], k=60, top=DEPTH)]
               for q, _ in queries}
        paths.append(_write(out / f"{name}.jsonl", run))
    return paths


def _write(path: Path, run: dict[str, list[tuple[str, float]]]) -> Path:
    path.write_text(run_file_text(run), encoding="utf-8")
    return path


def degraded_qrels(folder: Path, out: Path, kind: str, share: float, seed: int, source: Path | None = None) -> Path:
    """``source`` (default qrels/test.tsv) degraded in a known way, written to ``out``: ``drop`` relabels that share of the
    relevant (query, passage) pairs 0 (the query stays judged), ``random`` replaces that share of the
    queries' relevant passages with as many passages drawn at random from the corpus."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels = read_qrels(source or folder / "qrels" / "test.tsv")
    ids = _bodies(folder)[0]
    rows = []
    queries = sorted(qrels)
    chosen = set(rng.choice(len(queries), size=round(share * len(queries)), replace=False).tolist()) if kind == "random" else set()
    for n, query in enumerate(queries):
        docs = qrels[query]
        if kind == "random" and n in chosen:
            picked = rng.choice(len(ids), size=len(docs), replace=False)
            rows += [(query, ids[p], 1) for p in picked]
            continue
        for doc, grade in docs.items():
            dropped = kind == "drop" and grade > 0 and rng.random() < share
            rows.append((query, doc, 0 if dropped else grade))
    path = out / f"{kind}-{share:g}-{seed}.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows), encoding="utf-8")
    return path
