"""Rank the candidates of texts samples by cosine similarity, through the retrieval core.

Candidates of a ranked sample with (Nc, Np) are ``p[:Np] + n[:Nc − Np]`` (index i < Np is positive
i, else negative i − Np; paper 003 appendix A.1). Each candidate set goes into a faiss flat index
under the cosine metric (:mod:`ragdiag.retrieval.indexes`: vectors L2-normalised, inner product);
the scores are rounded to :data:`COSINE_DECIMALS` decimals and ties broken by the lower candidate
index, so a ranking does not depend on float noise in the last bits. P and R at each cut-off K ≤ Nc
are n/K and n/Np (docs/methods.md#1-the-retrieval-response-dataset and #2-per-sample-measures).
The bundled sample's builder (``tools/sample_builder.py``) ranks through this same function, so
``--rank-with local`` reproduces its rankings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.errors import RagdiagError

# Short embedder codes for the ranked samples' ``E`` (the bundled sample uses L6 for ``local``).
EMBEDDER_CODES = {"local": "L6"}
COSINE_DECIMALS = 6


def rank_by_cosine(query_vector: np.ndarray, candidate_vectors: np.ndarray) -> list[int]:
    """Candidate indices best first: faiss flat cosine scores rounded to 6 decimals, ties by index."""
    from ragdiag.retrieval.index_specs import parse_index_spec
    from ragdiag.retrieval.indexes import build_index, prepare_vectors, search

    candidates = prepare_vectors(candidate_vectors, "cosine", "candidate vectors")
    query = prepare_vectors(np.asarray(query_vector).reshape(1, -1), "cosine", "query vector")
    index = build_index(parse_index_spec("flat"), candidates, "cosine")
    scores, ids = search(index, query, len(candidates))
    by_candidate = np.empty(len(candidates), dtype=np.float64)
    by_candidate[ids[0]] = scores[0]
    rounded = np.round(by_candidate, COSINE_DECIMALS)
    return [int(i) for i in np.argsort(-rounded, kind="stable")]


def ranked_sample(sample_id: str, embedder_code: str, nc: int, np_: int, rank: list[int],
                  ks: list[int]) -> RankedSample:
    """A ranked sample with P = n/K and R = n/Np at every cut-off K ≤ Nc of ``ks`` (sorted, unique)."""
    hits = np.cumsum(np.asarray(rank) < np_)
    cutoffs = sorted(k for k in set(ks) if k <= nc)
    return RankedSample(sample_id, embedder_code, nc, np_, cutoffs, [int(hits[k - 1]) / k for k in cutoffs],
                        [int(hits[k - 1]) / np_ for k in cutoffs], rank)


def rank_texts(samples: list[TextsSample], embedder_spec: str, ks: list[int], cache_dir: Path | None = None,
               progress: bool = True, variants: list[tuple[int, int]] | None = None) -> list[RankedSample]:
    """Ranked samples of each texts sample: one per (Nc, Np) in ``variants`` (in that order), or one
    over all its candidates (Nc = |p| + |n|, Np = |p|) when ``variants`` is None. ``E`` is the
    embedder's short code (``local`` → L6) or its spec."""
    from ragdiag.retrieval.embedders import load_embedder

    for sample in samples:
        if not sample.p:
            raise RagdiagError(f"texts sample '{sample.id}' has no positives: it cannot be ranked")
        for nc, np_ in variants or ():
            if np_ > len(sample.p) or nc - np_ > len(sample.n) or not 1 <= np_ < nc:
                raise RagdiagError(f"texts sample '{sample.id}' cannot give Nc={nc}, Np={np_} "
                                   f"({len(sample.p)} positives, {len(sample.n)} negatives)")
    embedder = load_embedder(embedder_spec, cache_dir=cache_dir)
    distinct = sorted({t for s in samples for t in (s.q, *s.p, *s.n)})
    vectors = dict(zip(distinct, embedder.encode(distinct, progress=progress)))
    code = EMBEDDER_CODES.get(embedder_spec, embedder_spec)
    ranked = []
    for s in samples:
        for nc, np_ in variants or [(len(s.p) + len(s.n), len(s.p))]:
            candidates = s.p[:np_] + s.n[: nc - np_]
            rank = rank_by_cosine(vectors[s.q], np.stack([vectors[t] for t in candidates]))
            ranked.append(ranked_sample(s.id, code, nc, np_, rank, ks))
    return ranked
