"""``ragdiag triage``: why did each failing query's answer fail? Interventions in the decision tree's
order (oracle, inject, position, drop-distractors, k-sweep, closed-book; single-passage opt-in)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command
from ragdiag.cli.params import FLOAT, TEXT, finite_float

if TYPE_CHECKING:
    from ragdiag.commands.triage import AnswerSettings, ClientConfig, GradingOptions

TriageCorpus = p.retold(p.CorpusFolder, "BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or corpus.jsonl, ranked by --retriever (or give --texts and --ranked).", kind=Optional[Path])
TriageRetriever = p.retold(p.Retriever, "With --corpus, one retriever: bm25[:VARIANT], dense:EMBEDDER[:INDEX_SPEC] or hybrid:A+B (RRF); default bm25.")
TriageTexts = p.retold(p.Texts, "Texts samples (id, q, p, n): JSON/JSONL file, hub-layout folder, or hf:[REPO]; with --ranked, instead of --corpus.", kind=Optional[str])
TriageAnswers = p.retold(p.Answers, "Reference answers, JSON lines {\"query_id\": ID, \"answer\": TEXT} or {..., \"answers\": [...]} (the format sweep --answers reads): grades are against them, and the oracle runs; without it, grades are against the ideal answer from the relevant passages and the oracle is skipped.", kind=Optional[Path])
TriageK = p.retold(p.K, "Passages per query given to the generator (top K).")
TriageDepth = p.retold(p.Depth, "Candidate pool per query: inject looks for a relevant passage below K down to here (default: max(4K, 20, the largest --k-sweep cut-off)).")
FailBelow = Annotated[float, typer.Option("--fail-below", help="A query fails when its baseline grade is below this; an intervention fixes it when its grade reaches this or improves by 2. Range [1, 5].", metavar=FLOAT, callback=finite_float(1.0, 5.0))]
AllQueries = Annotated[bool, typer.Option("--all", help="Triage every query, not only the failing ones (base rates; eRAG τ needs varied grades).")]
Interventions = Annotated[str, typer.Option("--interventions", help="Comma list of oracle, inject, position, drop-distractors, k-sweep, closed-book, single-passage (opt-in: K calls per query for the utility labels).", metavar=TEXT)]
Exhaustive = Annotated[bool, typer.Option("--exhaustive", help="Run every intervention that applies (complete 'also' lists) instead of stopping once the cause is known.")]
KSweep = Annotated[Optional[str], typer.Option("--k-sweep", help="Cut-offs of the k-sweep intervention, comma list (default: 1,3,K,2K).", metavar=TEXT)]
TriageOutDir = p.retold(p.OutDir, "Folder for triage.json, per_query.jsonl and (single-passage) utility-qrels.tsv (created if missing).")


@llm_command
def triage(
    out_dir: TriageOutDir = Path("triage"),
    corpus: TriageCorpus = None,
    queries: p.given(p.FolderQueries, "--corpus") = None,
    qrels: p.retold(p.Qrels, "With --corpus: qrels, BEIR or TREC (default: the folder's qrels/test.tsv).") = None,
    retriever: TriageRetriever = None,
    texts: TriageTexts = None,
    ranked: p.Ranked = None,
    answers: TriageAnswers = None,
    k: TriageK = 5,
    depth: TriageDepth = None,
    fail_below: FailBelow = 3.0,
    all_queries: AllQueries = False,
    max_queries: p.MaxQueries = None,
    max_calls: p.MaxCalls = None,
    interventions: Interventions = "oracle,inject,position,drop-distractors,k-sweep,closed-book",
    exhaustive: Exhaustive = False,
    k_sweep: KSweep = None,
    ideal_cap: p.IdealCap = 10,
    bootstrap: p.Bootstrap = 1000,
    embed_base_url: p.EmbedBaseUrl = None,
    grading: GradingOptions = ao.GRADING,
    answer: AnswerSettings = ao.ANSWER,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Why did each failing answer fail? Baseline, then interventions in the decision tree's order; the cause of each
    query, the share of each cause with its fix, and the cost (files in --out-dir)."""
    from ragdiag.commands.triage import TriageRequest, parse_interventions, sweep_ks
    from ragdiag.commands.triage import run as run_triage
    from ragdiag.errors import RagdiagError
    from ragdiag.io.lists import parse_ks
    from ragdiag.report.triage_report import print_triage

    names = parse_interventions(interventions)
    if retriever is not None and len(retriever) != 1:
        raise RagdiagError("--retriever: triage ranks with one retriever; give it once")
    request = TriageRequest(
        k=k, fail_below=fail_below, all_queries=all_queries, interventions=names, exhaustive=exhaustive,
        ks=sweep_ks(k, tuple(parse_ks(k_sweep, "--k-sweep")) if k_sweep else None), ideal_cap=ideal_cap,
        max_calls=max_calls, grading=grading, answer=answer, corpus=corpus, queries=queries, qrels=qrels,
        retriever=retriever[0] if retriever else "bm25", texts=texts, ranked=ranked, answers=answers, depth=depth,
        max_queries=max_queries, bootstrap=bootstrap, embed_base_url=embed_base_url, llm=config, out_dir=out_dir,
        progress=progress)
    done = run_triage(request)
    print_triage(done.result, typer.echo)
    for name, path in done.paths.items():
        typer.echo(f"{name}: {path}")
    del min_coverage  # every triaged query is reported, graded or not: no coverage threshold applies
