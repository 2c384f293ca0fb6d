"""``ragdiag label``: an LLM utility judge for passage pools (paper 001, rag-gs stages S2–S5).

Pool per query: the top ``pool_depth`` of each ``--pool`` retriever, fused by RRF (c = 60; see
:mod:`ragdiag.evaluate.label_pool`). Each (query, passage) pair is judged 1–5 with the utility rubric
of ``prompts/utility-label.v1.toml`` from the passage text only (query and passage fenced); a reply
without a strict grade gets one repair request, then the grade is null — never a default. Every call
goes through the LLM cache (``--cache replay`` reruns with zero requests). With ``repeats`` > 1 each
pair is judged that many times (distinct cache entries); its grade is the lower median of the parsed
grades, with per-pair SD and Krippendorff's α (ordinal) over repeats in the manifest.

Pruning (``min_per_query``, rag-gs S5): per query, whole grade buckets are kept from 5 down to 1
until at least that many pairs are kept; kept pairs stay in fused order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import check_ids_fit
from ragdiag.errors import RagdiagError
from ragdiag.evaluate.agreement import judge_vs_human, shared_pairs
from ragdiag.evaluate.inputs import load_graded_qrels
from ragdiag.evaluate.label_pool import RRF_C, build_pools, parse_pool
from ragdiag.evaluate.label_result import LabelManifest, LabelPool
from ragdiag.evaluate.plackett_luce import RefineParams
from ragdiag.io.writer import write_json, write_jsonl, write_text
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt
from ragdiag.llm.runner import run_items
from ragdiag.pipeline.agreement import agreement_summary, ordinal_alpha
from ragdiag.pipeline.grade_parse import parse_grade
from ragdiag.pipeline.refine_pools import refine_pools
from ragdiag.pipeline.run_meta import (
    guard_run_outputs,
    open_record,
    run_details,
    run_meta,
    summary,
)


@dataclass(frozen=True)
class LabelOptions:
    corpus: Path
    queries: Path
    out: Path
    pool: str = "dense:local,bm25"
    pool_depth: int = 50
    repeats: int = 1
    min_per_query: int | None = None
    human: Path | None = None
    refine: RefineParams | None = None
    max_queries: int | None = None


@dataclass
class LabelResult:
    """The run's totals (``summary``), where its manifest went, and the manifest itself."""

    summary: dict[str, Any]
    manifest: Path
    pairs: int
    written: int
    document: LabelManifest


def _corpus_file(path: Path) -> Path:
    return path / "corpus.jsonl" if path.is_dir() else path


def prune(pool: list[str], grades: dict[str, int], min_items: int) -> list[str]:
    """Keep whole grade buckets 5 → 1 until at least ``min_items`` graded pairs; fused order kept."""
    graded = [d for d in pool if d in grades]
    kept: set[str] = set()
    for grade in range(5, 0, -1):
        if len(kept) >= min_items:
            break
        kept.update(d for d in graded if grades[d] == grade)
    return [d for d in graded if d in kept]


def make_labeler(client: LLMClient, query_text: dict[str, str], doc_text: dict[str, str]):
    """``label((query_id, doc_id, repeat)) -> (grade | None, replies)``: rubric prompt, one repair."""
    prompt, repair = load_prompt("utility-label"), load_prompt("utility-label-repair")

    def label(item: tuple[str, str, int]) -> tuple[int | None, list[str]]:
        query_id, doc_id, repeat = item
        messages = prompt.messages(query=query_text[query_id], passage=doc_text[doc_id])
        tag = f"query {query_id} passage {doc_id} repeat {repeat}"
        first = client.chat(client.request(messages, prompt.id, json_reply=True, repeat=repeat,
                                           max_tokens=JUDGE_MAX_TOKENS), tag)
        grade = parse_grade(first.text)
        if grade is not None:
            return grade, [first.text]
        follow_up = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
        second = client.chat(client.request(follow_up, f"{prompt.id}+{repair.id}", json_reply=True, repeat=repeat,
                                            max_tokens=JUDGE_MAX_TOKENS), tag)
        return parse_grade(second.text), [first.text, second.text]

    return label


def refined_output(out: Path) -> Path:
    """``graded.tsv`` → ``graded.tsv.refined.jsonl``: the refined Top-N orders beside the qrels."""
    return out.with_name(f"{out.name}.refined.jsonl")


def refine_section(params: RefineParams, rows: list[dict[str, Any]], failures: list[dict], path: Path) -> dict[str, Any]:
    """The manifest's account of the refinement: parameters, totals and per-query counts."""
    return {"params": asdict(params), "output": str(path), "queries": len(rows),
            "judgements": sum(r["judgements"] for r in rows), "failed_batches": sum(r["failed"] for r in rows),
            "stable": sum(1 for r in rows if r["stable_stop"]), "failures": failures,
            "per_query": [{k: r[k] for k in ("query_id", "rounds", "judgements", "failed", "locks", "stable_stop")}
                          for r in rows]}


def _lower_median(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def run_label(opts: LabelOptions, config: ClientConfig, progress: bool = True) -> LabelResult:
    """Pool, judge, prune, write graded qrels (BEIR TSV) and the manifest; returns the summary."""
    sources = parse_pool(opts.pool)
    if opts.pool_depth < 1 or opts.repeats < 1 or (opts.min_per_query is not None and opts.min_per_query < 1):
        raise RagdiagError("--pool-depth, --repeats and --min-per-query must be at least 1")
    run_inputs = [Path(s.arg) for s in sources if s.kind == "run"]
    corpus = _corpus_file(Path(opts.corpus))
    inputs = [corpus, opts.queries, opts.human, *run_inputs]
    refined_path = refined_output(opts.out) if opts.refine else None
    manifest = guard_run_outputs([opts.out, refined_path], inputs)
    human = load_graded_qrels(opts.human) if opts.human is not None else None
    doc_ids, doc_texts = load_corpus(corpus)
    query_ids, query_texts = load_queries(opts.queries)
    if opts.max_queries is not None:
        query_ids, query_texts = query_ids[: opts.max_queries], query_texts[: opts.max_queries]
    check_ids_fit("tsv", [(f"document id in {corpus}", doc_ids), (f"query id in {opts.queries}", query_ids)],
                  "the graded qrels are a BEIR TSV; rename the id in the input")
    prompt, repair = load_prompt("utility-label"), load_prompt("utility-label-repair")
    prompt_ids = {"utility-label": prompt.id, "utility-label-repair": repair.id}
    if opts.refine:
        prompt_ids.update({name: load_prompt(name).id for name in ("listwise-rank", "listwise-rank-repair")})
    record = open_record("label", config, inputs, prompt_ids)
    fused, per_source = build_pools(sources, doc_ids, doc_texts, query_ids, query_texts, opts.pool_depth,
                                    config.cache_dir, progress)
    pairs = [(q, d) for q, pool in zip(query_ids, fused) for d in pool]
    items = [(q, d, r) for q, d in pairs for r in range(opts.repeats)]
    client = LLMClient(config)
    try:
        labeler = make_labeler(client, dict(zip(query_ids, query_texts)), dict(zip(doc_ids, doc_texts)))
        outcome = run_items(client, labeler, items, [f"{q} {d} repeat {r}" for q, d, r in items], "labelling", progress)
        grades = np.full((1, opts.repeats, len(pairs)), np.nan)
        unparsed = []
        for n, ((q, d, r), result) in enumerate(zip(items, outcome.results)):
            if result is None:
                continue
            grade, replies = result
            if grade is None:
                unparsed.append({"item": f"{q} {d} repeat {r}", "replies": replies})
            else:
                grades[0, r, n // opts.repeats] = grade
        final: dict[tuple[str, str], int] = {}
        per_pair = []
        for n, (q, d) in enumerate(pairs):
            parsed = [int(g) for g in grades[0, :, n] if not np.isnan(g)]
            if parsed:
                final[(q, d)] = _lower_median(parsed)
            if opts.repeats > 1:
                per_pair.append({"query_id": q, "doc_id": d, "grades": [None if np.isnan(g) else int(g) for g in grades[0, :, n]],
                                 "sd": float(np.std(parsed, ddof=1)) if len(parsed) > 1 else None})
        kept: list[tuple[str, str]] = []
        for q, pool in zip(query_ids, fused):
            judged = {d: final[(q, d)] for d in pool if (q, d) in final}
            chosen = prune(pool, judged, opts.min_per_query) if opts.min_per_query else [d for d in pool if d in judged]
            kept.extend((q, d) for d in chosen)
        refined, refine_failures = [], []
        if opts.refine:
            kept_by_query: dict[str, list[str]] = {q: [] for q in query_ids}
            for q, d in kept:
                kept_by_query[q].append(d)
            refined, refine_failures = refine_pools(client, query_ids, query_texts, dict(zip(doc_ids, doc_texts)),
                                                    [kept_by_query[q] for q in query_ids], final, opts.refine, progress)
        result_summary = summary(client, len(pairs), len(final), outcome.seconds, missing_grades=len(pairs) - len(final),
                                 written=len(kept), agreement=agreement_summary(grades, [config.model]))
        meta = run_meta("label", client, prompts=[prompt.id, repair.id], repeats=opts.repeats,
                        judge_max_tokens=JUDGE_MAX_TOKENS)
        details = run_details(client)
    finally:
        client.close()
    check_ids_fit("tsv", [("query id", (q for q, _ in kept)), ("document id", (d for _, d in kept))])
    if refined_path is not None:
        write_jsonl(refined_path, refined, inputs=inputs)
    write_text(opts.out, "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{final[(q, d)]}\n" for q, d in kept),
               inputs=inputs)
    pool_info = LabelPool(
        sources=[s.name for s in sources], depth=opts.pool_depth, fusion=f"reciprocal rank fusion, c = {RRF_C}",
        queries=len(query_ids), pairs=len(pairs),
        per_source_pairs={name: sum(len(x) for x in lists) for name, lists in per_source.items()},
        pool_size={"min": min(map(len, fused), default=0), "max": max(map(len, fused), default=0)},
        prune={"min_per_query": opts.min_per_query, "kept": len(kept), "dropped": len(final) - len(kept),
               "rule": "whole grade buckets 5 -> 1 until at least min_per_query pairs per query"},
        grade_counts={str(g): sum(1 for v in final.values() if v == g) for g in range(1, 6)},
    )
    document = LabelManifest(meta, details, pool_info, result_summary, outcome.failures, unparsed)
    if opts.refine:
        document.refine = refine_section(opts.refine, refined, refine_failures, refined_path)
        result_summary["refine"] = {k: document.refine[k] for k in ("queries", "judgements", "failed_batches", "stable")}
    if per_pair:
        document.repeats = {"grade": "lower median of the parsed grades", "pairs": per_pair}
    if human is not None:
        human_map = {(q, d): g for q, docs in human.grades.items() for d, g in docs.items()}
        document.human = {"source": str(opts.human), "binary_read_as_1_and_5": human.binary,
                          **judge_vs_human(final, human_map), "alpha_ordinal": ordinal_alpha(shared_pairs(final, human_map))}
        result_summary["human"] = {k: document.human[k] for k in ("pairs", "kappa_quadratic", "alpha_ordinal", "mean_abs_diff")}
    document.run_record = record.as_dict()
    write_json(manifest, document.to_json(), inputs=[p for p in inputs if p is not None])
    return LabelResult(result_summary, manifest, len(pairs), len(kept), document)
