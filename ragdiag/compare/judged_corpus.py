"""Two retrievers on one corpus as the two sides of the judged loop (``compare --sequential --corpus C
--base-retriever A --new-retriever B``).

The corpus, queries and qrels are read and cross-checked as ``pipeline --corpus`` reads them
(:func:`ragdiag.pipeline.corpus_inputs.load_corpus_data`); each retriever (a ``--retriever`` spec of
:func:`ragdiag.pipeline.corpus_retrievers.parse_retriever`: ``bm25[:VARIANT[:k1=..,b=..]]``,
``dense:EMBEDDER[:INDEX_SPEC]``, ``hybrid:A+B``) ranks every query once, to depth K, before any LLM call;
the texts and ranked samples are built as ``pipeline --corpus`` builds them
(:func:`ragdiag.pipeline.corpus_run.build_samples`: positives = the query's relevant passages, negatives =
the non-relevant passages either retriever returned). The judged loop then runs on them exactly as on a
texts file and two ranked files. A query left out of one side (its list shorter than K: BM25 ranks only
passages sharing a term with the query) is left out of both, and counted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.compare.judged import JudgedSides
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.pipeline.corpus_retrievers import RetrieverSpec

# queries with more relevant passages than this are left out (their ideal answer would take them all), as
# ``pipeline --corpus``'s default --ideal-cap
IDEAL_CAP = 10


@dataclass(frozen=True)
class CorpusSource:
    """``--corpus`` (a BEIR folder, a corpus file or a folder of documents), its ``--queries`` and ``--qrels``
    when the folder does not hold them, and the two retriever specs (``new`` None: the base retriever again,
    for two models on one ranking)."""

    corpus: Path
    queries: Path | None
    qrels: Path | None
    base: str
    new: str | None = None

    def specs(self) -> tuple[RetrieverSpec, RetrieverSpec]:
        """Both specs parsed (malformed or unknown → one line naming the flag)."""
        from ragdiag.pipeline.corpus_retrievers import parse_retriever

        parsed = []
        for flag, text in (("--base-retriever", self.base), ("--new-retriever", self.new or self.base)):
            try:
                parsed.append(parse_retriever(text))
            except RagdiagError as err:
                raise RagdiagError(f"{flag}: {err}") from None
        return parsed[0], parsed[1]


@dataclass(frozen=True)
class CorpusSamples:
    """The records the judged loop reads: one texts sample per query, one ranked sample per query and side."""

    texts: list[dict[str, Any]]
    base: list[dict[str, Any]]
    new: list[dict[str, Any]]
    files: dict[str, Path]
    notes: list[str]


def corpus_samples(source: CorpusSource, k: int, cache_dir: Path | None = None, seed: int = 0,
                   progress: bool = False) -> CorpusSamples:
    """Read and check the corpus, rank every query with both retrievers (to depth ``k``) and build the samples."""
    from ragdiag.pipeline.corpus_inputs import load_corpus_data
    from ragdiag.pipeline.corpus_retrievers import CorpusRetrieval
    from ragdiag.pipeline.corpus_run import build_samples

    base_spec, new_spec = source.specs()
    data = load_corpus_data(source.corpus, source.queries, source.qrels)
    if k > len(data.doc_ids):
        raise RagdiagError(f"--k {k} is larger than the {len(data.doc_ids)} passages of {data.files['corpus']}; "
                           f"give --k {len(data.doc_ids)} or less")
    retrieval = CorpusRetrieval(data.doc_texts, data.query_texts, cache_dir, seed=seed, progress=progress)
    rankings = {spec.text: retrieval.rank(spec, k) for spec in (base_spec, new_spec)}
    texts, ranked, skipped, _ = build_samples(data, rankings, [k], k, IDEAL_CAP)
    by_side = [[r for r in ranked if r["E"] == spec.text] for spec in (base_spec, new_spec)]
    both = {r["id"] for r in by_side[0]} & {r["id"] for r in by_side[1]}
    notes = []
    if skipped:
        notes.append(f"{len(skipped)} queries have more than {IDEAL_CAP} relevant passages and are left out "
                     f"(first: {skipped[0]})")
    short = len(texts) - len(both)
    if short:
        notes.append(f"{short} queries have fewer than K = {k} hits from one retriever and are left out of both sides")
    base, new = ([r for r in side if r["id"] in both] for side in by_side)
    return CorpusSamples([t for t in texts if t["id"] in both], base, new, data.files, notes)


def _loaded(records: list[dict[str, Any]], cls: type[Any], source: str) -> Loaded[Any]:
    digest = hashlib.sha256(json.dumps(records, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
    return Loaded([cls.from_json(r, source, i) for i, r in enumerate(records, start=1)], source, digest)


def corpus_sides(source: CorpusSource, k: int, cache_dir: Path | None, seed: int, progress: bool,
                 notice: Callable[[str], None]) -> tuple[JudgedSides, dict[str, Path]]:
    """The judged loop's sides from two retrievers on one corpus, and the files read."""
    samples = corpus_samples(source, k, cache_dir, seed, progress)
    for line in samples.notes:
        notice(line)
    if not samples.texts:
        raise RagdiagError(f"--corpus {source.corpus}: no query is left to judge")
    corpus = samples.files["corpus"]
    base_spec, new_spec = source.specs()
    base = _loaded(samples.base, RankedSample, f"{corpus} ranked by {base_spec.text}")
    new = base if new_spec.text == base_spec.text else _loaded(samples.new, RankedSample,
                                                              f"{corpus} ranked by {new_spec.text}")
    return JudgedSides(_loaded(samples.texts, TextsSample, f"{corpus} (texts)"), base, new, k), samples.files
