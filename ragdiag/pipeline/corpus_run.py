"""``ragdiag pipeline --corpus``: your own corpus, queries and qrels, ranked by your retrievers, then
generate → grade → correlate (→ evaluate when the qrels are graded), all into one folder.

For each query and retriever the top ``depth`` (default max K; recorded as ``depth``) becomes a
ranked sample of the retrieval-response schema (docs/methods.md#1-the-retrieval-response-dataset): id ``<dataset>-<qid>``, E = the
retriever spec, Np = relevant passages in the qrels (score > 0), candidate i < Np = relevant
passage i, else a retrieved non-relevant passage (see :func:`build_samples` for Nc); inK,
P = n/K and R = n/Np follow from the qrels. The texts
sample's positives are the relevant passages, so the ideal answer uses them all; a query with more
relevant passages than ``ideal_cap`` is left out and counted; so is a ranked sample whose list is
shorter than the depth (BM25 ranks only passages sharing a term with the query; IVF may return
fewer than asked). The stages after ranking are the existing ``pipeline`` on the written texts/ranked files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.data.schema import subset_of
from ragdiag.errors import RagdiagError
from ragdiag.pipeline.corpus_inputs import CorpusData
from ragdiag.pipeline.corpus_retrievers import RetrieverSpec, parse_retriever
from ragdiag.pipeline.end_to_end import PipelineResult
from ragdiag.results.pipeline import CorpusRunManifest, CorpusRunMeta

TEXTS_FILE, RANKED_FILE = "samples_texts.json", "samples_ranked.json"


@dataclass
class CorpusRunResult:
    pipeline: PipelineResult
    evaluation: dict[str, Any] | None
    manifest: CorpusRunManifest
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def summary(self) -> CorpusRunMeta:
        return self.manifest.meta


def check_config(retrievers: list[str], ks: list[int], depth: int | None,
                 ideal_cap: int) -> tuple[list[RetrieverSpec], int]:
    """Parsed retrievers and the depth (default max K); every spec and range checked before any work."""
    if not retrievers:
        raise RagdiagError("give at least one --retriever (dense:EMBEDDER[:INDEX_SPEC], bm25 or hybrid:A+B)")
    specs = [parse_retriever(r) for r in retrievers]
    if len({s.text for s in specs}) != len(specs):
        raise RagdiagError("each --retriever must be different (it names the ranked samples' E)")
    depth = depth if depth is not None else max(ks)
    if max(ks) > depth:
        raise RagdiagError(f"--k {max(ks)} is larger than the retrieval depth {depth} (--depth)")
    if ideal_cap < 1:
        raise RagdiagError(f"--ideal-cap must be at least 1, got {ideal_cap}")
    return specs, depth


def build_samples(data: CorpusData, rankings: dict[str, list[list[tuple[int, float]]]], ks: list[int], depth: int,
                  ideal_cap: int) -> tuple[list[dict], list[dict], list[str], int]:
    """(texts samples, ranked samples, skipped query ids, short lists dropped) from per-retriever
    rankings (corpus rows, best first).

    One texts sample per query: p = its relevant passages, n = every non-relevant passage any
    retriever returned (first seen first). Each ranked sample orders all Np + |n| candidates (the
    schema's permutation): the retriever's top ``depth`` first, in its order, then the candidates it
    did not return, in candidate order (beyond the depth; no K reaches them). A list shorter than
    the depth is dropped and counted.
    """
    texts, ranked, skipped, short = [], [], [], 0
    for j, qid in enumerate(data.query_ids):
        positives = data.relevant[qid]
        if len(positives) > ideal_cap:
            skipped.append(qid)
            continue
        slot = {d: i for i, d in enumerate(positives)}
        negatives: list[str] = []
        orders = {}
        for name, lists in rankings.items():
            if len(lists[j]) < depth:
                short += 1
                continue
            order = []
            for row, _ in lists[j]:
                doc = data.doc_ids[row]
                if doc not in slot:
                    slot[doc] = len(positives) + len(negatives)
                    negatives.append(doc)
                order.append(slot[doc])
            orders[name] = order
        n_candidates = len(positives) + len(negatives)
        sample_id = f"{data.name}-{qid}"
        for name, order in orders.items():
            returned = set(order)
            full = order + [i for i in range(n_candidates) if i not in returned]
            hits = [1 if i < len(positives) else 0 for i in order]
            cut = [k for k in ks if k <= depth]
            ranked.append({"id": sample_id, "E": name, "Nc": n_candidates, "Np": len(positives), "K": cut,
                           "P": [sum(hits[:k]) / k for k in cut], "R": [sum(hits[:k]) / len(positives) for k in cut],
                           "rank": full, "depth": depth})
        text_of = lambda d: data.doc_texts[data.row_of[d]]  # noqa: E731
        texts.append({"id": sample_id, "q": data.query_texts[j], "p": [text_of(d) for d in positives],
                      "n": [text_of(d) for d in negatives], "query_id": qid, "p_ids": positives, "n_ids": negatives})
    return texts, ranked, skipped, short


def planned_rows(data: CorpusData, specs: list[RetrieverSpec], ks: list[int], depth: int,
                 ideal_cap: int) -> list[tuple[str, str, int, int]]:
    """(retriever, subset, K, Np) of every top-K row the run will grade, known before any retrieval:
    each kept query (≤ ideal_cap relevant passages) × retriever × K ≤ depth."""
    subset = subset_of(f"{data.name}-x")
    return [(spec.text, subset, k, len(data.relevant[qid])) for qid in data.query_ids
            if len(data.relevant[qid]) <= ideal_cap for spec in specs for k in ks if k <= depth]


def safe_name(name: str) -> str:
    """A retriever spec as a file name (its run file under ``runs/``)."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", name).strip("_")
