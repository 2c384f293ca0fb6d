"""A small synthetic BEIR folder whose retrieval and answers are known exactly.

Each document's first sentence is five words found in no other document. Vectors come from the
embeddings test server (:func:`tests.servers.embeddings_server.vector_for`, one random unit vector
per text), and each query's one relevant document is chosen as its exact nearest neighbour under
those vectors. So exact k-NN always retrieves the relevant document at rank 1, an ANN point
retrieves it or not, and the toy model's answer holds the ideal answer's words exactly when the
relevant document is among the references.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.servers.embeddings_server import vector_for

MODEL, DIM = "toy-embed", 32


def write_corpus(folder: Path, n_docs: int = 300, n_queries: int = 40, dim: int = DIM) -> Path:
    """Write corpus.jsonl, queries.jsonl and qrels/test.tsv into ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    docs = [{"_id": f"d{i}", "title": "",
             "text": " ".join(f"w{i}x{j}" for j in range(5)) + f". Filler sentence number {i} about nothing."}
            for i in range(n_docs)]
    queries = [{"_id": f"q{j}", "text": f"question {j} about nothing"} for j in range(n_queries)]
    doc_vectors = np.stack([vector_for(d["text"], MODEL, dim) for d in docs])
    nearest = [int(np.argmax(doc_vectors @ vector_for(q["text"], MODEL, dim))) for q in queries]
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(d) + "\n" for d in docs)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(q) + "\n" for q in queries)
    lines = ["query-id\tcorpus-id\tscore"] + [f"q{j}\td{i}\t1" for j, i in enumerate(nearest)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
