"""``ragdiag testset --human-qrels``: the certificate from inside the generation run. The synthetic
questions did not exist before the run, so no run file of the user's can rank them: the systems are
the ``--retriever`` configurations (``bm25[:VARIANT]``, ``dense:EMBEDDER[:INDEX_SPEC]``,
``hybrid:A+B``, as :mod:`ragdiag.pipeline.corpus_retrievers`), each ranking the synthetic questions
and the human ones (``--human-queries``) over the same corpus. Label set A = the synthetic qrels,
B = the human qrels; the certificate is :func:`ragdiag.testset.certify.certify`'s, unpaired (two
question sets), with the BM25 − dense gap of the first ``bm25`` and the first ``dense`` retriever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.evaluate.inputs import GradedQrels
from ragdiag.pipeline.corpus_retrievers import RetrieverSpec
from ragdiag.results.testset import CertifyResult
from ragdiag.testset.certify import MIN_RUNS, CertifyOptions, certify, score_rankings

__all__ = ["HumanSide", "certify_generated", "check_human", "rank_both", "run_file_names", "synthetic_qrels"]

DEPTH = 100
SYNTHETIC_ID = re.compile(r"ts\d{5}")  # the ids build.query_id gives the synthetic questions


@dataclass(frozen=True)
class HumanSide:
    """The human label set (B), its questions, and the retrieval configurations to certify over."""

    qrels_path: Path
    queries_path: Path
    qrels: GradedQrels
    query_ids: list[str]
    query_texts: list[str]
    specs: list[RetrieverSpec]


def _queries_file(qrels_arg: Path, queries: Path | None) -> Path:
    if queries is not None:
        if not queries.is_file():
            raise RagdiagError(f"--human-queries {queries}: no such file")
        return queries
    if qrels_arg.is_dir() and (qrels_arg / "queries.jsonl").is_file():
        return qrels_arg / "queries.jsonl"
    raise RagdiagError(f"--human-qrels {qrels_arg}: give --human-queries (the human questions' texts), or a BEIR "
                       "folder with queries.jsonl as --human-qrels")


def check_human(qrels_arg: Path, queries: Path | None, retrievers: list[str], doc_ids: list[str], top: int) -> HumanSide:
    """Read and check B and the retrievers before any call: at least MIN_RUNS distinct retrievers,
    every judged human question with a text, ids distinct from the synthetic ones, judged passages
    of this corpus."""
    from ragdiag.data.beir import load_queries
    from ragdiag.evaluate.inputs import load_graded_qrels
    from ragdiag.pipeline.corpus_retrievers import parse_retriever
    from ragdiag.testset.certify import qrels_file

    if len(retrievers) < MIN_RUNS:
        raise RagdiagError(f"--human-qrels needs at least {MIN_RUNS} --retriever (the systems both label sets rank, "
                           f"e.g. --retriever bm25 --retriever bm25:okapi --retriever dense:local ...); got {len(retrievers)}")
    doubled = sorted({r for r in retrievers if retrievers.count(r) > 1})
    if doubled:
        raise RagdiagError(f"--retriever {doubled[0]} is given twice; give each configuration once")
    if not 2 <= top <= len(retrievers):
        raise RagdiagError(f"--top {top}: must be between 2 and the number of --retriever ({len(retrievers)})")
    specs = [parse_retriever(r) for r in retrievers]
    for spec in specs:
        for part in (spec.parts or (spec,)):
            if part.kind == "dense":
                from ragdiag.retrieval.embedders import load_embedder

                load_embedder(part.embedder)  # checks the name; the model loads when it first embeds
    path = qrels_file(qrels_arg, "--human-qrels")
    qrels = load_graded_qrels(path)
    queries_path = _queries_file(qrels_arg, queries)
    ids, texts = load_queries(queries_path)
    text_of = dict(zip(ids, texts, strict=True))
    missing = [q for q in qrels.query_ids if q not in text_of]
    if missing:
        raise RagdiagError(f"--human-qrels {path}: {len(missing)} judged queries have no text in the human questions "
                           f"(first: '{missing[0]}'); give the questions file of these qrels as --human-queries")
    clash = [q for q in qrels.query_ids if SYNTHETIC_ID.fullmatch(q)]
    if clash:
        raise RagdiagError(f"--human-qrels {path}: query id '{clash[0]}' looks like a synthetic one (ts00000 ...); "
                           "rename the human queries")
    known = set(doc_ids)
    if not any(d in known for docs in qrels.grades.values() for d in docs):
        raise RagdiagError(f"--human-qrels {path}: none of its judged passages is in --corpus; the human qrels must "
                           "judge the same corpus")
    return HumanSide(path, queries_path, qrels, qrels.query_ids, [text_of[q] for q in qrels.query_ids], specs)


def rank_both(human: HumanSide, synthetic_ids: list[str], synthetic_texts: list[str], doc_ids: list[str],
              doc_texts: list[str], k: int, cache_dir: Path | None, seed: int, progress: bool) -> list[dict[str, list[tuple[str, float]]]]:
    """One run per retriever (query id → (doc id, score) best first, depth max(100, k) capped at the
    corpus), ranking the synthetic and the human questions alike."""
    from ragdiag.pipeline.corpus_retrievers import CorpusRetrieval

    ids = [*synthetic_ids, *human.query_ids]
    retrieval = CorpusRetrieval(doc_texts, [*synthetic_texts, *human.query_texts], cache_dir, seed=seed, progress=progress)
    depth = min(max(DEPTH, k), len(doc_ids))
    runs = []
    for spec in human.specs:
        ranked = retrieval.rank(spec, depth)
        runs.append({q: [(doc_ids[row], score) for row, score in pairs] for q, pairs in zip(ids, ranked, strict=True)})
    return runs


def run_file_names(specs: list[RetrieverSpec]) -> list[str]:
    """``runs/NN-SLUG.jsonl`` for each retriever (its spec with every run of other characters as ``_``)."""
    return [f"runs/{i:02d}-{re.sub(r'[^A-Za-z0-9.=-]+', '_', s.text).strip('_')}.jsonl" for i, s in enumerate(specs, 1)]


def synthetic_qrels(qrels: dict[str, dict[str, int]], graded: bool, source: str) -> GradedQrels:
    """The qrels ``testset`` writes, read as :func:`ragdiag.evaluate.inputs.load_graded_qrels` reads
    them: graded 1–5 with ``--label-pool``, else the source document alone, binary 1 read as grade 5."""
    if graded:
        return GradedQrels({q: dict(docs) for q, docs in qrels.items()}, False, source)
    return GradedQrels({q: {d: 5 for d in docs} for q, docs in qrels.items()}, True, source)


def certify_generated(human: HumanSide, synthetic: GradedQrels, runs: list[dict[str, list[tuple[str, float]]]],
                      options: CertifyOptions, meta: dict[str, object]) -> CertifyResult:
    """A = the synthetic qrels, B = the human ones, over the retrievers' runs."""
    from dataclasses import replace

    names = [s.text for s in human.specs]
    ids = [{q: [d for d, _ in pairs] for q, pairs in run.items()} for run in runs]
    bm25 = next((s.text for s in human.specs if s.kind == "bm25"), None)
    dense = next((s.text for s in human.specs if s.kind == "dense"), None)
    if bm25 is not None and dense is not None:
        options = replace(options, bm25_run=bm25, dense_run=dense)
    a = score_rankings(synthetic, ids, names, options, "the synthetic qrels")
    b = score_rankings(human.qrels, ids, names, options, "--human-qrels")
    return certify(names, a, b, options, meta)
