"""Write ``tests/compare/data/scifact_bm25_per_query.csv``: per-query scores of a real BM25 run on
SciFact (BEIR test split, 300 queries), the data of the compare calibration tests.

BM25 is ragdiag's own (``ragdiag.retrieval.bm25.BM25Index``, bm25s, default variant, title + text),
top 100 per query; the metrics are evaluate's per-query computation (``ragdiag.compare.inputs.read_runs``:
nDCG@10, Recall@10, Recall@100, MAP@10, MRR@10, P@10). The sidecar ``.meta.json`` records the
sha256 of the corpus and qrels it was made from.

Run from the clone: ``python tests/compare/make_scifact_scores.py [SCIFACT_FOLDER]`` (default: the
workplace copy ``../shared/data/scifact`` beside the clone).
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ragdiag.compare.inputs import read_runs  # noqa: E402
from ragdiag.data.beir import load_corpus, load_queries  # noqa: E402
from ragdiag.data.qrels_runs import read_qrels, run_file_text  # noqa: E402
from ragdiag.io.files import file_sha256  # noqa: E402
from ragdiag.io.writer import write_text  # noqa: E402
from ragdiag.retrieval.bm25 import BM25Index  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "scifact_bm25_per_query.csv"
METRICS = [("ndcg", 10), ("recall", 10), ("recall", 100), ("map", 10), ("mrr", 10), ("precision", 10)]


def shared_scifact() -> Path | None:
    """The workplace copy of SciFact beside the clone (or beside its worktree folder), if present."""
    for parent in (ROOT.parent, ROOT.parent.parent):
        folder = parent / "shared" / "data" / "scifact"
        if (folder / "corpus.jsonl").is_file():
            return folder
    return None


def main(folder: Path) -> None:
    ids, texts = load_corpus(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / "test.tsv"
    judged = read_qrels(qrels_path)
    queries = [(q, t) for q, t in zip(*load_queries(folder / "queries.jsonl")) if q in judged]
    index = BM25Index.build(texts)
    run = {}
    for query_id, text in queries:
        rows, scores = index.top_k(text, 100)
        run[query_id] = [(ids[r], float(s)) for r, s in zip(rows, scores)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bm25.jsonl"
        write_text(path, run_file_text(run))
        sides, names, order = read_runs(path, None, qrels_path, METRICS)
    side = sides[str(path)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query_id", *names])
        for query in order:
            if query in side.row:
                writer.writerow([query, *(f"{v:.6f}" for v in side.matrix[side.row[query]])])
    meta = {"script": "tests/compare/make_scifact_scores.py", "retrieval": "ragdiag BM25Index (bm25s), default variant, top 100",
            "queries": len(side.ids), "corpus_sha256": file_sha256(folder / "corpus.jsonl"),
            "qrels_sha256": file_sha256(qrels_path)}
    OUT.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {OUT} ({len(side.ids)} queries)")


if __name__ == "__main__":
    given = Path(sys.argv[1]) if len(sys.argv) > 1 else shared_scifact()
    if given is None:
        sys.exit("SciFact not found: pass its BEIR folder")
    main(given)
