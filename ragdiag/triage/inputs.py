"""What ``ragdiag triage`` reads: per query its text, its candidate pool (ranked passage ids, best
first, to ``depth``) and its relevant passages (qrels, highest grade first; empty: a qrels gap).

- ``--corpus DIR`` (BEIR: corpus.jsonl, queries.jsonl, qrels) ranked by one ``--retriever`` spec
  through the shared retrieval core (:mod:`ragdiag.pipeline.corpus_retrievers`). Queries: those with
  a reference answer (``--answers``), else those the qrels judge (a query judged only non-relevant
  is kept: it is a qrels gap).
- ``--index-dir DIR`` (with ``--queries`` and ``--qrels``): the passages of an index folder
  (:func:`ragdiag.retrieval.store.index_passages`: a folder of documents' ``passages.json``, ids
  ``relative/path#n``, or the corpus file it was built from), ranked by ``--run`` or ``--retriever``.
  With ``--by-document``, qrels that judge documents (``guide/install``) make every passage of the
  document (``guide/install.md#0``, ``#1`` …) relevant at its grade.
- ``--texts T --ranked R`` (the retrieval-response schema, docs/methods.md#1-the-retrieval-response-dataset): each ranked sample is a
  query whose pool is its ranking (``rank``, candidate i < Np positive); passage ids are
  ``ID#p<i>`` / ``ID#n<j>``. A ranked sample without a texts sample is refused (one line, exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.errors import DataError, RagdiagError


@dataclass
class TriageQuery:
    """One query: its text, its candidate pool (ids, rank order) and its relevant ids (best first)."""

    id: str
    text: str
    pool: list[str]
    relevant: list[str]

    def rank_of(self, doc_id: str) -> int | None:
        """1-based rank of ``doc_id`` in the pool, or None."""
        return self.pool.index(doc_id) + 1 if doc_id in self.pool else None

    def first_relevant_rank(self) -> int | None:
        """Rank of the best-ranked relevant passage in the pool (1-based), or None when none is in it."""
        ranks = [r for r in (self.rank_of(d) for d in self.relevant) if r is not None]
        return min(ranks) if ranks else None


@dataclass
class TriageData:
    name: str
    queries: list[TriageQuery]
    doc_text: dict[str, str]
    files: dict[str, Path] = field(default_factory=dict)
    retriever: str | None = None
    depth: int | None = None  # the candidate pool each query was cut to


def default_depth(k: int, ks: tuple[int, ...] = ()) -> int:
    """The candidate pool when ``--depth`` is not given: max(4K, 20, the largest k-sweep cut-off)."""
    return max(4 * k, 20, *ks)


def pool_depth(depth: int | None, k: int, ks: tuple[int, ...], passages: int, where: Path) -> int:
    """``--depth`` checked against the corpus (at most its ``passages``); without it the default, cut
    to the corpus when the corpus is smaller (a default the user never gave refuses nothing)."""
    if k > passages:
        raise RagdiagError(f"--k {k} is larger than the {passages} passages of {where}; give --k {passages} or less")
    if depth is None:
        return min(default_depth(k, ks), passages)
    if depth > passages:
        raise RagdiagError(f"--depth {depth} is larger than the {passages} passages of {where}; give --depth "
                           f"{passages} or less (or leave it out)")
    return depth


def load_corpus_queries(corpus: Path | None, queries: Path | None, qrels: Path | None, answers: set[str] | None,
                        retriever: str, depth: int | None, k: int, ks: tuple[int, ...], max_queries: int | None,
                        cache_dir: Path | None, embed_base_url: str | None, seed: int, run: Path | None = None,
                        only: list[str] | None = None, given: tuple[set[str], Path] | None = None,
                        qrels_optional: bool = False, index_dir: Path | None = None,
                        progress: bool = False) -> TriageData:
    """BEIR folder (or the passages of ``index_dir``) → queries (with answers, else judged; ``given``: only the
    ids answered in --answers-from; ``only``: these ids, in this order), their pools
    from ``retriever`` (or from the user's ``run``: TREC or run.jsonl) to ``depth`` (:func:`pool_depth`)
    and their relevant ids. ``qrels_optional`` (no reference answers): a BEIR folder without qrels is read
    with no judgements, every query kept (the reference-free path)."""
    from ragdiag.data.beir import load_queries
    from ragdiag.data.qrels_runs import read_qrels
    from ragdiag.io.fields import current_reading
    from ragdiag.pipeline.corpus_retrievers import CorpusRetrieval, parse_retriever

    spec = parse_retriever(retriever)
    unjudged = (qrels_optional and qrels is None and index_dir is None and corpus is not None and corpus.is_dir()
                and not (corpus / "qrels").exists())
    doc_ids, doc_texts, files, name = _passages(corpus, index_dir, queries, qrels, unjudged, progress)
    query_ids, query_texts = load_queries(files["queries"])
    judgements = {} if unjudged else read_qrels(files["qrels"])
    if not unjudged and current_reading().by_document:
        judgements = passage_judgements(judgements, doc_ids, files["qrels"])
    known_docs = set(doc_ids)
    unknown = [(q, d) for q, rels in judgements.items() for d in rels if d not in known_docs]
    if unknown:
        raise DataError(f"qrels {files['qrels']}: document '{unknown[0][1]}' (judged for query '{unknown[0][0]}') "
                        f"is not in {files['corpus']}")
    wanted = answers if answers is not None else set(query_ids) if unjudged else set(judgements)
    kept = [(q, t) for q, t in zip(query_ids, query_texts) if q in wanted]
    if not kept:
        what = "--answers file" if answers is not None else f"qrels {files.get('qrels')}"
        raise DataError(f"{what}: no query of {files['queries']} has an entry (queries look like '{query_ids[0]}')")
    if given is not None:
        answered = [(q, t) for q, t in kept if q in given[0]]
        if not answered:
            raise DataError(f"--answers-from {given[1]}: the file answers other queries (none of the {len(kept)} "
                            f"queries of {files['queries']}, e.g. '{kept[0][0]}', has a topK row); give the answers "
                            f"file of these queries")
        kept = answered
    if only is not None:
        kept = _only(kept, only, files["queries"])
    if max_queries is not None:
        kept = kept[:max_queries]
    depth = pool_depth(depth, k, ks, len(doc_ids), files["corpus"])
    out = []
    for q, text in kept:
        rels = judgements.get(q, {})
        out.append(TriageQuery(q, text, [], sorted((d for d, g in rels.items() if g > 0), key=lambda d: -rels[d])))
    data = TriageData(name, out, dict(zip(doc_ids, doc_texts)), files, spec.text, depth)
    if not qrels_optional:
        needs_qrels(data)  # before the retriever's index is built
    if run is not None:
        _pools_from_run(out, run, known_docs, depth)
        data.retriever = f"run:{run}"
        return data
    ranked = CorpusRetrieval(doc_texts, [t for _, t in kept], cache_dir, embed_base_url, seed,
                             progress).rank(spec, depth)
    for query, hits in zip(out, ranked):
        query.pool = [doc_ids[r] for r, _ in hits]
    return data


def _files_without_qrels(corpus: Path, queries: Path | None) -> dict[str, Path]:
    """A BEIR folder without qrels: its corpus and queries (the reference-free path)."""
    files = {"corpus": corpus / "corpus.jsonl", "queries": queries or corpus / "queries.jsonl"}
    for what, path in files.items():
        if not path.is_file():
            raise RagdiagError(f"{what} {path}: file not found")
    return files


def _passages(corpus: Path | None, index_dir: Path | None, queries: Path | None, qrels: Path | None,
              unjudged: bool = False, progress: bool = False) -> tuple[list[str], list[str], dict[str, Path], str]:
    """(passage ids, texts, the files read, the dataset's name) of ``--corpus`` or ``--index-dir``."""
    if index_dir is None:
        from ragdiag.data.beir import load_corpus
        from ragdiag.pipeline.corpus_inputs import resolve_files

        assert corpus is not None  # one of the two: checked by the command
        files = _files_without_qrels(corpus, queries) if unjudged else resolve_files(corpus, queries, qrels)
        from ragdiag.io.progress import step

        with step(f"reading the corpus {files['corpus']}", progress):
            doc_ids, doc_texts = load_corpus(files["corpus"])
        name = files["corpus"].parent.name if files["corpus"].name == "corpus.jsonl" else files["corpus"].stem
        return doc_ids, doc_texts, files, name
    from ragdiag.retrieval.store import index_passages, open_index_dir

    if queries is None or qrels is None:
        raise RagdiagError(f"--index-dir {index_dir}: give --queries and --qrels too (an index folder holds passages only)")
    index = open_index_dir(index_dir, progress)
    texts, where = index_passages(index)
    return index.doc_ids, texts, {"corpus": where, "queries": Path(queries), "qrels": Path(qrels)}, Path(index_dir).name


def passage_judgements(judgements: dict[str, dict[str, int]], passage_ids: list[str],
                       qrels: Path) -> dict[str, dict[str, int]]:
    """Qrels that judge documents as qrels of their passages (``--by-document``): each passage
    ``path#n`` of a judged document (:func:`ragdiag.io.fields.document_of`) at the document's grade,
    in passage order; a judged document without passages is refused, as an unknown document is."""
    from ragdiag.io.fields import document_of

    passages: dict[str, list[str]] = {}
    for passage in passage_ids:
        passages.setdefault(document_of(passage), []).append(passage)
    out: dict[str, dict[str, int]] = {}
    for query, rels in judgements.items():
        expanded: dict[str, int] = {}
        for doc, grade in rels.items():
            cut = passages.get(doc)
            if cut is None:
                raise DataError(f"qrels {qrels}: document '{doc}' (judged for query '{query}') has no passage "
                                f"'{doc}.<suffix>#n' in the index (--by-document reads document ids)")
            for passage in cut:
                expanded[passage] = max(grade, expanded.get(passage, grade))
        out[query] = expanded
    return out


def _only(kept: list[tuple[str, str]], only: list[str], queries: Path) -> list[tuple[str, str]]:
    """The queries named by --ids / --from-compare, in that order; an id the queries and qrels lack is refused."""
    by_id = dict(kept)
    missing = [q for q in only if q not in by_id]
    if missing:
        raise DataError(f"query '{missing[0]}' (--ids / --from-compare) is not a judged query of {queries}"
                        f"{f' ({len(missing)} such ids)' if len(missing) > 1 else ''}")
    return [(q, by_id[q]) for q in only]


def _pools_from_run(queries: list[TriageQuery], run: Path, known_docs: set[str], depth: int) -> None:
    """Each query's pool: the user's run, cut at ``depth``; a query the run lacks or a passage missing
    from the corpus is refused (one line)."""
    from dataclasses import replace

    from ragdiag.data.qrels_runs import read_run_ids
    from ragdiag.io.fields import current_reading

    ranking = read_run_ids(run, replace(current_reading(), by_document=False))  # the pools are passages
    for query in queries:
        ids = ranking.get(query.id)
        if ids is None:
            raise DataError(f"--run {run}: query '{query.id}' has no ranking (the run must rank every triaged query)")
        unknown = next((d for d in ids[:depth] if d not in known_docs), None)
        if unknown is not None:
            raise DataError(f"--run {run}: query '{query.id}' ranks passage '{unknown}', which is not in the corpus")
        query.pool = ids[:depth]


QRELS_CAUSES = ("generator", "retrieval-miss", "ranking", "position", "distractors")


def needs_qrels(data: TriageData) -> None:
    """No relevant passage for any query: the causes that need qrels cannot be tested (refused before any call)."""
    if not any(q.relevant for q in data.queries):
        source = data.files.get("qrels") or data.files.get("ranked")
        raise RagdiagError(f"qrels {source}: none of the {len(data.queries)} queries has a relevant passage, so the "
                           f"causes that need qrels ({', '.join(QRELS_CAUSES)}) cannot be tested; give --qrels with "
                           "judgements for these queries")


def load_texts_ranked(texts: str, ranked: str, depth: int, max_queries: int | None) -> TriageData:
    """Retrieval-response samples → one query per ranked sample (its ranking cut at ``depth``)."""
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts

    loaded_texts, loaded_ranked = load_texts(texts), load_ranked(ranked)
    by_id = {s.id: s for s in loaded_texts.samples}
    counts: dict[str, int] = {}
    for sample in loaded_ranked.samples:
        counts[sample.id] = counts.get(sample.id, 0) + 1
    doc_text: dict[str, str] = {}
    out: list[TriageQuery] = []
    for number, sample in enumerate(loaded_ranked.samples, 1):
        source = by_id.get(sample.id)
        if source is None:
            raise DataError(f"--ranked {ranked} record {number}: sample '{sample.id}' has no passage texts in "
                            f"--texts {texts} (field 'id')")
        if sample.Np > len(source.p) or sample.Nc - sample.Np > len(source.n):
            raise DataError(f"--ranked {ranked} record {number}: Np {sample.Np} / Nc {sample.Nc} need more passages "
                            f"than texts sample '{sample.id}' holds ({len(source.p)} positives, {len(source.n)} "
                            "negatives) (field 'Nc')")
        ids = [f"{sample.id}#p{i}" if i < sample.Np else f"{sample.id}#n{i - sample.Np}" for i in range(sample.Nc)]
        for i, doc in enumerate(ids):
            doc_text[doc] = source.p[i] if i < sample.Np else source.n[i - sample.Np]
        qid = sample.id if counts[sample.id] == 1 else f"{sample.id}|{sample.E}|{sample.Nc}|{sample.Np}"
        out.append(TriageQuery(qid, source.q, [ids[i] for i in sample.rank[:depth]], ids[: sample.Np]))
    if max_queries is not None:
        out = out[:max_queries]
    return TriageData(Path(str(texts)).stem, out, doc_text, {"texts": Path(str(texts)), "ranked": Path(str(ranked))},
                      depth=depth)
