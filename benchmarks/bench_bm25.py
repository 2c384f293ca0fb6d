"""BM25: speed of the bm25s engine against rank-bm25, and retrieval quality on SciFact and spf-qr-fr.

1. Latency, side by side in one run, on 20,000 passages (every passage of scifact, msmarco and
   spf-qr-fr from the data folder, topped up by repeating scifact passages) and 200
   queries (first 100 of scifact and of msmarco): rank-bm25's ``BM25Okapi.get_scores`` + top-k
   against ragdiag's ``BM25Index.top_k`` (bm25s) with the same tokens — Okapi variant (scores
   checked equal to rank-bm25's on every query) and the Lucene variant.
2. SciFact test queries (300, qrels/test.tsv), title + text: nDCG@10 and R@100 with
   ``ir_measures`` for each variant with and without stemming; Anserini's flat BM25 baseline is
   nDCG@10 = 0.6789.
3. spf-qr-fr (French): nDCG@10 and R@10, Lucene variant, with and without Snowball stemming and
   accent folding.

ir_measures is given rank-derived scores (depth − rank), so it evaluates ragdiag's ranking as is
(trec_eval would otherwise re-break equal scores by document id).

Run: ``.venv/bin/python benchmarks/bench_bm25.py [--data DIR]`` after ``ragdiag data get scifact``,
``msmarco`` and ``spf-qr-fr`` (benchmarks/_data.py: ``--data``, else ``$RAGDIAG_DATA`` / the user data
dir, else ../shared/data; the numbers in BENCHMARKS.md come from ../shared/data, whose MS MARCO
sample is ``msmarco-passage-sample``).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._data import dataset  # noqa: E402
from benchmarks._report import write_section  # noqa: E402
from ragdiag.data.beir import load_corpus, load_queries  # noqa: E402
from ragdiag.data.qrels_runs import read_qrels  # noqa: E402
from ragdiag.retrieval.bm25 import BM25Index, Tokenizer, parse_bm25_spec, top_k_from_scores  # noqa: E402

TARGET = 20_000
ANSERINI_SCIFACT_FLAT = 0.6789


def passages() -> tuple[list[str], str]:
    texts = []
    for name in ("scifact", "msmarco", "spf-qr-fr"):
        texts += load_corpus(dataset(name) / "corpus.jsonl")[1]
    real = len(texts)
    texts += texts[: TARGET - real]
    return texts, f"{real:,} real passages + {TARGET - real:,} repeated scifact passages"


def ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95)) * 1000


def latency() -> str:
    from rank_bm25 import BM25Okapi

    texts, origin = passages()
    queries = []
    for name in ("scifact", "msmarco"):
        queries += load_queries(dataset(name) / "queries.jsonl")[1][:100]
    tokenizer = Tokenizer("en", stem=True)
    start = time.perf_counter()
    reference = BM25Okapi([tokenizer(t) for t in texts])
    ref_build = time.perf_counter() - start
    builds = {}
    indexes = {}
    for variant in ("okapi", "lucene"):
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            indexes[variant] = BM25Index.build(texts, parse_bm25_spec(variant))
            samples.append(time.perf_counter() - start)
        builds[variant] = statistics.median(samples)
    times: dict[str, list[float]] = {"rank-bm25": [], "okapi": [], "lucene": []}
    for query in queries:
        start = time.perf_counter()
        ref_scores = np.asarray(reference.get_scores(tokenizer(query)))
        top_k_from_scores(ref_scores, 10)
        times["rank-bm25"].append(time.perf_counter() - start)
        for variant in ("okapi", "lucene"):
            start = time.perf_counter()
            indexes[variant].top_k(query, 10)
            times[variant].append(time.perf_counter() - start)
        np.testing.assert_allclose(indexes["okapi"].scores(query), ref_scores, rtol=1e-9, atol=1e-9)
    base = ms(times["rank-bm25"])
    rows = "\n".join(
        f"| {label} | {build:.2f} s | {ms(times[key]):.3f} ms | {p95(times[key]):.3f} ms | {base / ms(times[key]):.0f}× |"
        for key, label, build in [
            ("rank-bm25", "rank-bm25 `BM25Okapi.get_scores` + top-k (baseline)", ref_build),
            ("okapi", "ragdiag `bm25:okapi` on bm25s (same scores)", builds["okapi"]),
            ("lucene", "ragdiag `bm25:lucene` on bm25s (default)", builds["lucene"]),
        ]
    )
    return f"""### Per-query latency, bm25s vs rank-bm25

{TARGET:,} passages ({origin}), {len(queries)} queries (100 scifact + 100 msmarco), k = 10, one process, same tokens
(ragdiag's tokeniser: English stopwords + Snowball stemming). Okapi scores from bm25s equal rank-bm25's on every
query (checked to 1e-9 in the run). Build: median of 3 for ragdiag (tokenising included), 1 for rank-bm25.

| engine | index build | per query, median | p95 | speed-up (median) |
|---|---|---|---|---|
{rows}
"""


def evaluate(ids, texts, queries, qrels, spec, stem, lang="en", accents=False, depth=100):
    import ir_measures
    from ir_measures import R, nDCG

    index = BM25Index.build(texts, parse_bm25_spec(spec, lang=lang, stem=stem, accents=accents))
    run = {}
    for query_id, text in queries:
        rows, _ = index.top_k(text, depth)
        run[query_id] = {ids[r]: float(depth - i) for i, r in enumerate(rows)}
    return ir_measures.calc_aggregate([nDCG @ 10, R @ 10, R @ 100], qrels, run)


def quality() -> str:
    from ir_measures import R, nDCG

    out = []
    folder = dataset("scifact")
    ids, texts = load_corpus(folder / "corpus.jsonl")
    qrels = read_qrels(folder / "qrels" / "test.tsv")
    queries = [(q, t) for q, t in zip(*load_queries(folder / "queries.jsonl")) if q in qrels]
    rows = []
    for spec, stem in [("lucene", True), ("lucene", False), ("okapi", True), ("okapi", False)]:
        m = evaluate(ids, texts, queries, qrels, spec, stem)
        rows.append(f"| `bm25:{spec}` | {'Snowball' if stem else 'none'} | {m[nDCG @ 10]:.4f} | "
                    f"{m[nDCG @ 10] - ANSERINI_SCIFACT_FLAT:+.4f} | {m[R @ 100]:.4f} |")
    out.append(f"""### SciFact (BEIR test split, {len(queries)} queries, {len(ids):,} abstracts, title + text)

Evaluated with `ir_measures` (pytrec_eval); Anserini's flat BM25 baseline (Lucene, k1 = 0.9, b = 0.4) is
nDCG@10 = {ANSERINI_SCIFACT_FLAT}.

| variant | stemming | nDCG@10 | Δ vs Anserini | R@100 |
|---|---|---|---|---|
""" + "\n".join(rows) + "\n")
    folder = dataset("spf-qr-fr")
    ids, texts = load_corpus(folder / "corpus.jsonl")
    qrels = read_qrels(folder / "qrels" / "test.tsv")
    queries = [(q, t) for q, t in zip(*load_queries(folder / "queries.jsonl")) if q in qrels]
    rows = []
    for stem, accents in [(False, False), (True, False), (True, True)]:
        m = evaluate(ids, texts, queries, qrels, "lucene", stem, lang="fr", accents=accents)
        rows.append(f"| {'Snowball (fr)' if stem else 'none'} | {'yes' if accents else 'no'} | {m[nDCG @ 10]:.4f} | "
                    f"{m[R @ 10]:.4f} | {m[R @ 100]:.4f} |")
    out.append(f"""### French: spf-qr-fr ({len(queries)} queries, {len(ids):,} Service-Public pages), `bm25:lucene`, `--lang fr`

| stemming | accent folding | nDCG@10 | R@10 | R@100 |
|---|---|---|---|---|
""" + "\n".join(rows) + "\n")
    return "\n".join(out)


def main() -> None:
    load_start = os.getloadavg()[0]
    md = "## BM25 (`benchmarks/bench_bm25.py`)\n\n"
    md += latency() + "\n" + quality()
    md += (f"\nLoad average (1 min) {load_start:.1f} at the start and "
           f"{os.getloadavg()[0]:.1f} at the end: other agents were using the shared 2-core machine during the run, "
           "so absolute times are inflated; the ratios are measured side by side in the same run.\n")
    write_section("bm25", md)
    print(md)


if __name__ == "__main__":
    main()
