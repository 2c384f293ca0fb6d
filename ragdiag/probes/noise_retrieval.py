"""Retrieval impact of conversational noise on a corpus (docs/methods.md#7-noise-probe, paper 001 §4.1 statistics).

Exact cosine search (the retrieval core's ``flat`` faiss index) over the corpus embeddings. For a
noisy query N and its clean query C, with top-K sets T_N and T_C:

- recall@K vs clean = |T_N ∩ T_C| / K (paper 000's R_i with the clean top-K as truth);
- overlap@K = |T_N ∩ T_C| / |T_N ∪ T_C| (Jaccard);
- Kendall τ-b between the clean top-K order and the noisy query's scores on those same K docs.

Each is averaged over variants per query, then over queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.io.files import file_sha256

if TYPE_CHECKING:
    from ragdiag.evaluate.inputs import GradedQrels


@dataclass(frozen=True)
class Corpus:
    """Documents of a BEIR ``corpus.jsonl`` (text = title + " " + text, as the retrieval core indexes them)."""

    path: Path
    ids: list[str]
    texts: list[str]
    sha256: str


def load_corpus(path: Path) -> Corpus:
    """A BEIR folder (with ``corpus.jsonl``), a corpus file or a folder of documents (``beir.load_corpus``)."""
    from ragdiag.data import beir
    from ragdiag.io.run_record import describe_input

    file = beir.corpus_file(Path(path))
    ids, texts = beir.load_corpus(file)
    return Corpus(file, ids, texts, file_sha256(file) if file.is_file() else describe_input(file)["sha256"])


def kendall_tau_topk(clean_order_scores: np.ndarray) -> float:
    """Kendall τ-b between rank order (positions 0..K-1) and the noisy scores of those docs."""
    from scipy.stats import kendalltau

    k = clean_order_scores.size
    tau = kendalltau(-np.arange(k), clean_order_scores).statistic
    return float(tau)


def retrieval_impact(texts, vectors: np.ndarray, corpus: Corpus, embedder, k: int, progress: bool,
                     judged: JudgedQueries | None = None) -> list[dict]:
    """Per level: ``recall_at_k``, ``overlap_at_k``, ``kendall_tau`` (means over queries) and ``k``;
    with ``judged`` (qrels), ``qrels_impact``: N-Recall4+, RA-nWG and recall@K of the noisy queries
    against the clean ones (:func:`ragdiag.probes.query_impact.variant_impact`)."""
    from ragdiag.retrieval.index_specs import parse_index_spec
    from ragdiag.retrieval.indexes import build_index, prepare_vectors, search

    if k < 1:
        raise RagdiagError(f"--k must be at least 1 (got {k})")
    docs = prepare_vectors(embedder.encode(corpus.texts, progress=progress), "cosine", str(corpus.path))
    index = build_index(parse_index_spec("flat"), docs, "cosine")
    _, clean_top = search(index, np.ascontiguousarray(vectors[texts.clean]), k)
    n_levels, n_queries, n_variants = texts.noisy.shape
    flat_noisy = np.ascontiguousarray(vectors[texts.noisy.reshape(-1)])
    _, noisy_top = search(index, flat_noisy, k)
    noisy_top = noisy_top.reshape(n_levels, n_queries, n_variants, k)
    noisy_vecs = flat_noisy.reshape(n_levels, n_queries, n_variants, -1)
    rows: list[dict[str, Any]] = []
    for li in range(n_levels):
        recall = np.empty((n_queries, n_variants))
        jaccard = np.empty((n_queries, n_variants))
        tau = np.empty((n_queries, n_variants))
        for qi in range(n_queries):
            clean_set = set(clean_top[qi].tolist())
            for v in range(n_variants):
                shared = len(clean_set & set(noisy_top[li, qi, v].tolist()))
                recall[qi, v] = shared / k
                jaccard[qi, v] = shared / (2 * k - shared)
                tau[qi, v] = kendall_tau_topk(docs[clean_top[qi]] @ noisy_vecs[li, qi, v]) if k > 1 else np.nan
        rows.append(
            {
                "k": k,
                "recall_at_k": float(recall.mean(axis=1).mean()),
                "overlap_at_k": float(jaccard.mean(axis=1).mean()),
                "kendall_tau": float(np.nanmean(np.nanmean(tau, axis=1))) if k > 1 else None,
            }
        )
        if judged is not None:
            rows[-1]["qrels_impact"] = judged.impact(f"level {li}", texts, li, clean_top, noisy_top, corpus.ids, k)
    return rows


@dataclass(frozen=True)
class JudgedQueries:
    """The probe's queries that the qrels judge (their positions and ids), for ``qrels_impact``."""

    positions: list[int]
    ids: list[str]
    qrels: GradedQrels
    bootstrap: int
    seed: int

    @classmethod
    def of(cls, query_ids: list[str], qrels, bootstrap: int, seed: int) -> JudgedQueries:
        positions = [i for i, q in enumerate(query_ids) if q in qrels.grades]
        if not positions:
            raise RagdiagError(f"--qrels {qrels.source}: none of the probe's query ids is judged "
                               f"(ids look like '{query_ids[0]}')")
        return cls(positions, [query_ids[i] for i in positions], qrels, bootstrap, seed)

    def impact(self, name: str, texts, level: int, clean_top: np.ndarray, noisy_top: np.ndarray, doc_ids: list[str],
               k: int) -> dict:
        from ragdiag.probes.query_impact import variant_impact

        def ranking(row: np.ndarray) -> list[str]:
            return [doc_ids[i] for i in row.tolist() if i >= 0]

        originals = [texts.unique[texts.clean[i]] for i in self.positions]
        variants = [[texts.unique[t] for t in texts.noisy[level, i]] for i in self.positions]
        result = variant_impact(name, self.ids, originals, variants, [ranking(clean_top[i]) for i in self.positions],
                                [[ranking(r) for r in noisy_top[level, i]] for i in self.positions], self.qrels, k,
                                self.bootstrap, self.seed)
        return result.to_json()
