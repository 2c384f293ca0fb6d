"""``ragdiag label``: an LLM utility judge for passage pools (paper 001, rag-gs stages S2–S5).

:func:`run` checks every path and option before the pool is embedded and judged, reads the corpus,
queries and human qrels, builds the fused pools (:mod:`ragdiag.evaluate.label_pool`), judges every pair
(:func:`ragdiag.answers.labelling.label_pairs`), prunes, refines (``--refine``,
:mod:`ragdiag.answers.refine`), then writes the graded qrels (BEIR TSV), the refined orders and the
manifest through :mod:`ragdiag.io.writer`, the manifest stamped with the run record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.evaluate.plackett_luce import RefineParams
from ragdiag.io.paths import check_paths
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.run_meta import check_coverage
from ragdiag.results.label import LabelManifest
from ragdiag.results.llm_run import RunDetails

__all__ = ["ClientConfig", "LabelOptions", "LabelRequest", "LabelResult", "RefineParams", "check_coverage",
           "refined_output", "run"]


@dataclass(frozen=True)
class LabelOptions:
    """What to label: corpus, queries, ``--out``, the pool, repeats, pruning, human qrels, refinement."""

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
class LabelRequest:
    """What to label (:class:`LabelOptions`: corpus, queries, pool, refinement, ``--out``) and the LLM client."""

    options: LabelOptions
    config: ClientConfig
    progress: bool = True


@dataclass
class LabelResult:
    """The run's totals (``summary``), where its manifest went, and the manifest itself."""

    summary: dict[str, Any]
    manifest: Path
    pairs: int
    written: int
    document: LabelManifest


def refined_output(out: Path) -> Path:
    """``graded.tsv`` → ``graded.tsv.refined.jsonl``: the refined Top-N orders beside the qrels."""
    return out.with_name(f"{out.name}.refined.jsonl")


def _corpus_file(path: Path) -> Path:
    from ragdiag.data.beir import corpus_file

    return corpus_file(path)


def run(request: LabelRequest) -> LabelResult:
    """Check, read, pool, judge, prune, refine, write the graded qrels and the manifest, stamp."""
    from ragdiag.answers.agreement import agreement_summary, ordinal_alpha
    from ragdiag.answers.labelling import label_pairs, prune
    from ragdiag.answers.refine import refine_pools, refine_section
    from ragdiag.answers.run_stats import run_details, run_meta, run_summary
    from ragdiag.commands.llm_files import guard_run_outputs, local, open_record
    from ragdiag.data.beir import load_corpus, load_queries
    from ragdiag.data.qrels_runs import check_ids_fit
    from ragdiag.errors import RagdiagError
    from ragdiag.evaluate.agreement import judge_vs_human, shared_pairs
    from ragdiag.evaluate.inputs import load_graded_qrels
    from ragdiag.evaluate.label_pool import RRF_C, build_pools, parse_pool
    from ragdiag.io.writer import write_json, write_jsonl, write_text
    from ragdiag.llm.client import LLMClient
    from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
    from ragdiag.llm.prompts import load_prompt
    from ragdiag.results.label import LabelPool

    opts, config, progress = request.options, request.config, request.progress
    check_paths(inputs={"--corpus": opts.corpus, "--queries": opts.queries, "--human": opts.human},
                outputs={"--out": opts.out}, folders={"--cache-dir": config.cache_dir})
    sources = parse_pool(opts.pool)
    if opts.pool_depth < 1 or opts.repeats < 1 or (opts.min_per_query is not None and opts.min_per_query < 1):
        raise RagdiagError("--pool-depth, --repeats and --min-per-query must be at least 1")
    run_inputs = [Path(s.arg) for s in sources if s.kind == "run"]
    corpus = _corpus_file(Path(opts.corpus))
    inputs: list[Any] = [corpus, opts.queries, opts.human, *run_inputs]
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
    doc_text = dict(zip(doc_ids, doc_texts))
    client = LLMClient(config)
    try:
        labelled = label_pairs(client, pairs, opts.repeats, dict(zip(query_ids, query_texts)), doc_text, progress)
        final = labelled.final
        kept: list[tuple[str, str]] = []
        for q, pool in zip(query_ids, fused):
            judged = {d: final[(q, d)] for d in pool if (q, d) in final}
            chosen = prune(pool, judged, opts.min_per_query) if opts.min_per_query else [d for d in pool if d in judged]
            kept.extend((q, d) for d in chosen)
        refined: list[dict[str, Any]] = []
        refine_failures: list[dict[str, Any]] = []
        if opts.refine:
            kept_by_query: dict[str, list[str]] = {q: [] for q in query_ids}
            for q, d in kept:
                kept_by_query[q].append(d)
            refined, refine_failures = refine_pools(client, query_ids, query_texts, doc_text,
                                                    [kept_by_query[q] for q in query_ids], final, opts.refine, progress)
        result_summary = run_summary(client, len(pairs), len(final), labelled.seconds,
                                     missing_grades=len(pairs) - len(final), written=len(kept),
                                     agreement=agreement_summary(labelled.grades, [config.model])).to_json()
        meta = run_meta("label", client, prompts=[prompt.id, repair.id], repeats=opts.repeats,
                        judge_max_tokens=JUDGE_MAX_TOKENS)
        details = RunDetails.from_json(dict(run_details(client)))
    finally:
        client.close()
    check_ids_fit("tsv", [("query id", (q for q, _ in kept)), ("document id", (d for _, d in kept))])
    if refined_path is not None:
        write_jsonl(refined_path, refined, inputs=local(inputs))
    write_text(opts.out, "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{final[(q, d)]}\n" for q, d in kept),
               inputs=local(inputs))
    pool_info = LabelPool(
        sources=[s.name for s in sources], depth=opts.pool_depth, fusion=f"reciprocal rank fusion, c = {RRF_C}",
        queries=len(query_ids), pairs=len(pairs),
        per_source_pairs={name: sum(len(x) for x in lists) for name, lists in per_source.items()},
        pool_size={"min": min(map(len, fused), default=0), "max": max(map(len, fused), default=0)},
        prune={"min_per_query": opts.min_per_query, "kept": len(kept), "dropped": len(final) - len(kept),
               "rule": "whole grade buckets 5 -> 1 until at least min_per_query pairs per query"},
        grade_counts={str(g): sum(1 for v in final.values() if v == g) for g in range(1, 6)},
    )
    document = LabelManifest(meta, details, pool_info, result_summary, labelled.failures, labelled.unparsed)
    if opts.refine and refined_path is not None:
        section = refine_section(opts.refine, refined, refine_failures, refined_path)
        document.refine = dict(section)
        result_summary["refine"] = {k: section[k] for k in ("queries", "judgements", "failed_batches", "stable")}
    if labelled.per_pair:
        document.repeats = {"grade": "lower median of the parsed grades", "pairs": labelled.per_pair}
    if human is not None:
        human_map = {(q, d): g for q, docs in human.grades.items() for d, g in docs.items()}
        document.human = {"source": str(opts.human), "binary_read_as_1_and_5": human.binary,
                          **judge_vs_human(final, human_map), "alpha_ordinal": ordinal_alpha(shared_pairs(final, human_map))}
        result_summary["human"] = {k: document.human[k] for k in ("pairs", "kappa_quadratic", "alpha_ordinal", "mean_abs_diff")}
    document.run_record = record.to_json()
    write_json(manifest, document.to_json(), inputs=local(inputs))
    return LabelResult(result_summary, manifest, len(pairs), len(kept), document)
