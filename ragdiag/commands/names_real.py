"""``ragdiag probe names --queries … --corpus … --qrels …``: the name ablations on a user's own
queries (paper 001 §4.5): detect names, ablate them, search again, compare against the qrels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.errors import RagdiagError
from ragdiag.io.out_format import write_result
from ragdiag.io.run_record import start_run
from ragdiag.probes.query_impact import query_impact
from ragdiag.probes.real_names import (
    ABLATIONS,
    ablate,
    find_names,
    name_lists,
    replacer,
)
from ragdiag.results.probes import DetectedQuery, NamesRealMeta, NamesRealResult

if TYPE_CHECKING:
    from ragdiag.retrieval.embedder_base import Embedder


@dataclass
class NamesRealRequest:
    queries: Path
    corpus: Path
    qrels: Path
    lang: str = "en"
    embedder: str = "local"
    ablations: tuple[str, ...] = ("mask", "replace")
    k: int = 10
    names: Path | None = None
    bootstrap: int = 1000
    seed: int = 0
    cache_dir: Path | None = None
    cache_mode: str | None = None
    worst: int = 10
    out: Path | None = None
    fmt: str | None = None


def parse_real_ablations(spec: str) -> tuple[str, ...]:
    """``all`` or a comma list of mask, gibberish, replace."""
    names = ABLATIONS if spec == "all" else tuple(dict.fromkeys(x.strip() for x in spec.split(",") if x.strip()))
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown or not names:
        raise RagdiagError(f"--ablations '{spec}': with --queries the ablations are {', '.join(ABLATIONS)} (or all)")
    return names


def _read_names(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except UnicodeDecodeError as err:
        raise RagdiagError(f"--names {path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise RagdiagError(f"--names {path}: cannot read ({err.strerror})") from None


def _search(embedder: Embedder, corpus_vectors: Any, index: Any, texts: list[str], doc_ids: list[str],
            k: int) -> list[list[str]]:
    from ragdiag.retrieval.indexes import prepare_vectors, search

    if not texts:
        return []
    vectors = prepare_vectors(embedder.encode(texts, progress=False), "cosine", "queries")
    _, top = search(index, vectors, k)
    return [[doc_ids[i] for i in row if i >= 0] for row in top]


def run(request: NamesRealRequest) -> NamesRealResult:
    """Detect, ablate, search again, compare; write --out (JSON or the table) and stamp the run record."""
    from ragdiag.data import beir
    from ragdiag.evaluate.inputs import load_graded_qrels
    from ragdiag.pipeline.corpus_inputs import check_judged_documents
    from ragdiag.probes.embedding import load_embedders
    from ragdiag.probes.noise_retrieval import load_corpus
    from ragdiag.retrieval.index_specs import parse_index_spec
    from ragdiag.retrieval.indexes import build_index, prepare_vectors

    record = start_run("ragdiag probe names", inputs=[request.queries, request.corpus, request.qrels, request.names],
                       seeds={"seed": request.seed, "bootstrap": request.seed})
    lists = name_lists(request.lang, _read_names(request.names))
    qrels = load_graded_qrels(request.qrels)
    query_ids, query_texts = beir.load_queries(request.queries)
    judged = [(q, t) for q, t in zip(query_ids, query_texts) if q in qrels.grades]
    if not judged:
        raise RagdiagError(f"{request.queries}: none of its queries is judged in {request.qrels}")
    ids, texts = [q for q, _ in judged], [t for _, t in judged]
    spans = [find_names(t, lists) for t in texts]
    detected = [DetectedQuery(q, t, [t[a:b] for a, b in s]) for q, t, s in zip(ids, texts, spans) if s]
    notes = [f"{len(detected)} of {len(ids)} judged queries hold a detected name; the others are left out of the "
             "comparison"]
    corpus = load_corpus(request.corpus)
    check_judged_documents(qrels.grades, set(corpus.ids), request.qrels, corpus.path)
    if request.k > len(corpus.ids):
        raise RagdiagError(f"--k {request.k} is larger than the corpus ({len(corpus.ids)} documents)")
    embedder = load_embedders([request.embedder], request.cache_dir, cache_mode=request.cache_mode)[0]
    record.models["embedders"] = [embedder.identity]
    docs = prepare_vectors(embedder.encode(corpus.texts, progress=True), "cosine", str(corpus.path))
    index = build_index(parse_index_spec("flat"), docs, "cosine")
    named = [i for i, s in enumerate(spans) if s]
    original = _search(embedder, docs, index, [texts[i] for i in named], corpus.ids, request.k)
    original_rankings: list[list[str]] = [[] for _ in ids]
    for i, ranking in zip(named, original):
        original_rankings[i] = ranking
    impacts = []
    for ablation in request.ablations:
        replace = replacer(request.lang, request.seed)
        changed = [ablate(texts[i], spans[i], ablation, request.lang, replace) if spans[i] else None
                   for i in range(len(ids))]
        rankings = _search(embedder, docs, index, [text for text in (changed[i] for i in named) if text is not None],
                           corpus.ids, request.k)  # every named query has spans, so a changed text
        changed_rankings: list[list[str] | None] = [None] * len(ids)
        for i, ranking in zip(named, rankings):
            changed_rankings[i] = ranking
        impacts.append(query_impact(ablation, ids, texts, changed, original_rankings, changed_rankings, qrels,
                                    request.k, request.bootstrap, request.seed, request.worst))
    meta = NamesRealMeta("ragdiag probe names", "real queries", str(request.queries), str(request.corpus),
                         str(request.qrels), request.lang, request.k, list(request.ablations), request.bootstrap,
                         request.seed, str(request.names) if request.names else None,
                         "faker person-name lists of the language + --names (see docs)")
    result = NamesRealResult(meta, detected, impacts, len(ids), embedder.identity, notes, record.to_json())
    if request.out is not None:
        import json

        from ragdiag.report import names_real_report

        write_result(request.out, request.fmt,
                     {"table": lambda: names_real_report.text(result),
                      "json": lambda: json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"},
                     [request.queries, request.corpus, request.qrels, request.names])
        result.written.append(request.out)
    return result
