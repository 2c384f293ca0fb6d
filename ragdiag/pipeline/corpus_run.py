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
from ragdiag.io.run_record import describe_input
from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
from ragdiag.llm.client import ClientConfig
from ragdiag.metrics.segments import segmentation_for
from ragdiag.pipeline.answer_plan import AnswerSettings
from ragdiag.pipeline.corpus_inputs import CorpusData, load_corpus_data
from ragdiag.pipeline.corpus_retrievers import (
    CorpusRetrieval,
    RetrieverSpec,
    parse_retriever,
)
from ragdiag.pipeline.generate import _stderr_line
from ragdiag.retrieval.formats import write_run

TEXTS_FILE, RANKED_FILE = "samples_texts.json", "samples_ranked.json"


@dataclass
class CorpusRunConfig:
    corpus: Path
    retrievers: list[str]
    ks: list[int]
    out_dir: Path
    queries: Path | None = None
    qrels: Path | None = None
    depth: int | None = None
    ideal_cap: int = 10
    max_queries: int | None = None
    embed_base_url: str | None = None
    repeats: int = 1
    judges: list[str] | None = None
    segments: str = "ratio"
    min_samples: int = 300
    bootstrap: int = 1000
    grading: Any = None  # ragdiag.pipeline.grade.GradingOptions (grade mode, reference gate)
    answer: AnswerSettings | None = None  # --lang and the prompt budget
    complete_cases: bool = False  # correlate only the queries graded at every K


@dataclass
class CorpusRunResult:
    pipeline: Any  # ragdiag.pipeline.end_to_end.PipelineResult
    evaluation: dict[str, Any] | None
    summary: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)


def check_config(cfg: CorpusRunConfig) -> tuple[list[RetrieverSpec], int]:
    """Parsed retrievers and the depth; every spec and range checked before any work."""
    if not cfg.retrievers:
        raise RagdiagError("give at least one --retriever (dense:EMBEDDER[:INDEX_SPEC], bm25 or hybrid:A+B)")
    specs = [parse_retriever(r) for r in cfg.retrievers]
    if len({s.text for s in specs}) != len(specs):
        raise RagdiagError("each --retriever must be different (it names the ranked samples' E)")
    depth = cfg.depth if cfg.depth is not None else max(cfg.ks)
    if max(cfg.ks) > depth:
        raise RagdiagError(f"--k {max(cfg.ks)} is larger than the retrieval depth {depth} (--depth)")
    if cfg.ideal_cap < 1:
        raise RagdiagError(f"--ideal-cap must be at least 1, got {cfg.ideal_cap}")
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


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", name).strip("_")


def run_corpus_pipeline(cfg: CorpusRunConfig, config: ClientConfig, progress: bool = True) -> CorpusRunResult:
    """Rank, write the samples and runs, then generate → grade → correlate (→ evaluate)."""
    from ragdiag.pipeline.end_to_end import run_pipeline

    specs, depth = check_config(cfg)
    out_dir = check_output_dir(cfg.out_dir, "--out-dir")
    data = load_corpus_data(cfg.corpus, cfg.queries, cfg.qrels, cfg.max_queries)
    if depth > len(data.doc_ids):
        raise RagdiagError(f"retrieval depth {depth} is larger than the {len(data.doc_ids)} passages of {data.files['corpus']}")
    paths = {"texts": out_dir / TEXTS_FILE, "ranked": out_dir / RANKED_FILE, "manifest": out_dir / "corpus_run.json"}
    run_paths = {s.text: out_dir / "runs" / f"{_safe(s.text)}.jsonl" for s in specs}
    guard_outputs([*paths.values(), *run_paths.values()], data.files.values())
    segments, changed = segmentation_for(planned_rows(data, specs, cfg.ks, depth, cfg.ideal_cap), cfg.segments,
                                         cfg.min_samples)
    if changed:
        _stderr_line(changed)
    retrieval = CorpusRetrieval(data.doc_texts, data.query_texts, config.cache_dir, cfg.embed_base_url, config.seed, progress)
    rankings = {s.text: retrieval.rank(s, depth) for s in specs}
    texts, ranked, skipped, short = build_samples(data, rankings, cfg.ks, depth, cfg.ideal_cap)
    if not texts:
        raise RagdiagError(f"every query has more relevant passages than --ideal-cap {cfg.ideal_cap}")
    inputs = list(data.files.values())
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(paths["texts"], texts, inputs=inputs)
    write_json(paths["ranked"], ranked, inputs=inputs)
    for spec in specs:
        run = {qid: [(data.doc_ids[r], s) for r, s in lists] for qid, lists in zip(data.query_ids, rankings[spec.text])}
        write_run(run_paths[spec.text], run, inputs=inputs)
        paths[f"run {spec.text}"] = run_paths[spec.text]
    result = run_pipeline(str(paths["texts"]), str(paths["ranked"]), None, cfg.ks, "all", out_dir, config, cfg.repeats,
                          cfg.judges, segments, cfg.min_samples, progress, cfg.grading, settings=cfg.answer,
                          complete_cases=cfg.complete_cases)
    evaluation = None
    if data.graded:
        from ragdiag.evaluate.evaluation import EvaluateParams, evaluate_files

        evaluated, rows = evaluate_files(data.files["qrels"], list(run_paths.values()),
                                         EvaluateParams(ks=tuple(cfg.ks), bootstrap=cfg.bootstrap, seed=config.seed),
                                         progress=progress)
        evaluation = evaluated.to_json()
        paths["evaluation"] = out_dir / "evaluation.json"
        write_json(paths["evaluation"], evaluation, inputs=inputs)
    summary = {
        "command": "ragdiag pipeline --corpus", "dataset": data.name,
        "files": {k: str(v) for k, v in data.files.items()},
        "retrievers": [{"spec": s.text, "kind": s.kind} for s in specs], "embedders": retrieval.identities,
        "ks": cfg.ks, "depth": depth, "ideal_cap": cfg.ideal_cap,
        "ideal": "answer from all the query's relevant passages (qrels score > 0); queries with more than "
                 f"ideal_cap = {cfg.ideal_cap} relevant passages are left out",
        "nc": "Nc counts all candidates of the query (relevant + every retriever's non-relevant hits); "
              "the retriever's own top-depth list comes first in rank, the rest follows in candidate order",
        "short_lists_dropped": short,
        "queries": {"judged_with_relevant": len(data.query_ids), "used": len(texts), "left_out": len(skipped),
                    "left_out_ids": skipped[:50], "not_judged": data.unjudged_queries},
        "ranked_samples": len(ranked), "qrels_graded": data.graded,
        "evaluate": "run (graded qrels)" if evaluation is not None else "skipped: the qrels are binary",
        "outputs": {k: str(v) for k, v in {**paths, **result.paths}.items()},
    }
    record = dict(result.correlation.get("run_record") or {})
    record["inputs"] = [describe_input(p) for p in inputs] + list(record.get("inputs", []))
    write_json(paths["manifest"], {"meta": summary, "run_record": record}, inputs=inputs)
    return CorpusRunResult(result, evaluation, summary, {**paths, **result.paths})
