"""``ragdiag testset certify``: can one label set (synthetic questions, LLM qrels) rank systems like
another (human qrels)?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import PanelCommand, PanelGroup

app = typer.Typer(cls=PanelGroup, no_args_is_help=True,
                  help="Synthetic test collections from a corpus, and the certificate of how far any cheap labels rank systems like human ones.")

RunFiles = Annotated[Optional[list[Path]], typer.Argument(
    metavar="RUN", show_default=False,
    help="More runs: --runs R1 R2 R3 ... takes every run file after the flag (or repeat --runs).")]


@app.command("certify", cls=PanelCommand)
def certify(
    a: Annotated[Path, o.path_option(o.INPUT, "--a", "Label set A (the one to certify): a qrels file, or a BEIR folder (its qrels/test.tsv).")],
    b: Annotated[Path, o.path_option(o.INPUT, "--b", "Label set B (the reference, e.g. human qrels): a qrels file or a BEIR folder.")],
    runs: Annotated[list[Path], o.path_option(o.INPUT, "--runs", "Runs (retrieval configurations, run.jsonl or TREC), at least 5, each ranking the queries of A and of B.")],
    more_runs: RunFiles = None,
    metric: Annotated[str, o.text_option(o.STATISTICS, "--metric", "The metric that orders the systems: one METRIC@K of the evaluate registry.")] = "ndcg@10",
    top: Annotated[int, o.int_option(o.STATISTICS, "--top", "τ among the best N systems of B (2 to the number of runs).", 2, 10_000)] = 5,
    bootstrap: Annotated[int, o.retold(o.Bootstrap, "Bootstrap resamples of the queries (seeded by --seed) for 95% intervals of τ, τ_AP and the gap; 0 = no intervals.")] = 1000,
    seed: o.Seed = 0,
    bm25_run: Annotated[Optional[Path], o.path_option(o.INPUT, "--bm25-run", "With --dense-run: one of --runs, the BM25 side of the lexical-bias gap (BM25 − dense under A and B).")] = None,
    dense_run: Annotated[Optional[Path], o.path_option(o.INPUT, "--dense-run", "With --bm25-run: one of --runs, the dense side of the gap.")] = None,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the certificate as JSON (with its run record).")] = None,
) -> None:
    """Certificate of label set A against B over ≥ 5 runs: Kendall τ, τ_AP, τ among the top systems,
    the largest pairwise swap, bootstrap intervals over queries, a verdict in words, and the BM25 −
    dense gap under each. Methods: docs/methods.md#testset-certificate."""
    from ragdiag.commands.testset import CertifyOptions, CertifyRequest, certify_run
    from ragdiag.report.testset_report import certificate_text

    options = CertifyOptions(top=top, bootstrap=bootstrap, seed=seed)
    result = certify_run(CertifyRequest(a, b, [*runs, *(more_runs or [])], metric, options, bm25_run, dense_run, out))
    typer.echo(certificate_text(result))
    if out is not None:
        typer.echo(f"wrote {out} (certificate)", err=True)


@app.callback(invoke_without_command=True)
def testset(
    ctx: typer.Context,
    client: o.ClientGroup = o.CLIENT,
    corpus: Annotated[Optional[Path], o.retold(o.Corpus, "The corpus to write questions from: BEIR corpus.jsonl (_id, title, text) or its folder, any corpus file, or a folder of documents (passages 'path#n').")] = None,
    out_dir: Annotated[Optional[Path], o.retold(o.OutDir, "Folder for the test collection: corpus.jsonl, queries.jsonl, qrels/test.tsv, answers.jsonl, candidates.jsonl, manifest.json.")] = None,
    n: Annotated[int, o.int_option(o.INPUT, "--n", "Passages sampled, one question each (the filters keep fewer).", 1, 1_000_000)] = 200,
    per_doc: Annotated[int, o.int_option(o.INPUT, "--per-doc", "At most this many passages per document (the sample is stratified over documents).", 1, 10_000)] = 1,
    min_words: Annotated[int, o.int_option(o.INPUT, "--min-words", "Passages (windows of --max-words words of a document) shorter than this are not sampled.", 1, 100_000)] = 30,
    max_words: Annotated[int, o.int_option(o.INPUT, "--max-words", "Documents are cut into passages of at most this many words.", 1, 100_000)] = 300,
    lang: Annotated[o.PromptLang, o.retold(o.AnswerLang, "Language of the questions: en, fr, or auto = each passage's own (French and English function words); French prompts for French passages.")] = o.PromptLang.auto,
    kinds: Annotated[str, o.text_option(o.INPUT, "--kinds", "Query kinds, comma list of question, claim, keywords (passages take them in turn).")] = "question",
    examples: Annotated[Optional[Path], o.path_option(o.INPUT, "--examples", "Few-shot examples in your own style: JSON lines {\"passage\", \"question\", \"answer\"}.")] = None,
    filters: Annotated[str, o.text_option(o.STATISTICS, "--filters", "Comma list of consistency, answerable, dedupe, copy, or none (the language check always runs).")] = "consistency,answerable,dedupe,copy",
    consistency_k: Annotated[int, o.int_option(o.STATISTICS, "--consistency-k", "consistency: the source document must be in the top K of BM25 (or of --consistency-index) for its question.", 1, 10_000)] = 10,
    consistency_index: Annotated[Optional[Path], o.path_option(o.RETRIEVAL, "--consistency-index", "consistency: an index folder built by 'ragdiag index build' from the same corpus; its dense index replaces BM25 for the round trip.")] = None,
    copy_n: Annotated[int, o.int_option(o.STATISTICS, "--copy-n", "copy: word n-grams compared with the passage.", 2, 20)] = 4,
    copy_max: Annotated[float, o.float_option(o.STATISTICS, "--copy-max", "copy: drop a question when more than this share of its n-grams is in the passage.", 0.0, 1.0)] = 0.5,
    dedupe_threshold: Annotated[float, o.float_option(o.STATISTICS, "--dedupe-threshold", "dedupe: drop a question whose cosine (character 3-gram TF-IDF, or --dedupe-embedder) with an earlier one reaches this.", 0.0, 1.0, lo_open=True)] = 0.9,
    dedupe_embedder: Annotated[Optional[str], o.text_option(o.RETRIEVAL, "--dedupe-embedder", "dedupe: embed the questions with this embedder (local, st:NAME, openai:MODEL, voyage:MODEL; cached) and compare their cosine instead of character 3-gram TF-IDF.")] = None,
    label_pool: Annotated[Optional[int], o.option(o.LLM, "--label-pool", help="Grade the top K of each --pool retriever for every kept question with label's judge (graded 1–5 qrels).", min=1, max=1000, metavar=o.INTEGER)] = None,
    pool: Annotated[str, o.text_option(o.RETRIEVAL, "--pool", "With --label-pool: pool retrievers, comma-separated: dense:EMBEDDER, bm25[:SPEC] (as label --pool).")] = "dense:local,bm25",
    max_calls: Annotated[Optional[int], o.retold(o.MaxCalls, "Hard cap on new LLM calls: each phase (questions, judgements, pool grades) counts its uncached calls before sending any and stops with exit 2 when they would pass the cap; the rerun resumes from the cache.")] = None,
    human_qrels: Annotated[Optional[Path], o.path_option(o.INPUT, "--human-qrels", "Certify the synthetic qrels against these human qrels of the same corpus (a file, or a BEIR folder with its queries.jsonl), over the --retriever configurations; writes certificate.json and runs/.")] = None,
    human_queries: Annotated[Optional[Path], o.path_option(o.INPUT, "--human-queries", "With --human-qrels given as a file: the human questions' texts (BEIR queries.jsonl or any questions file).")] = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    retriever: Annotated[Optional[list[str]], o.retold(o.Retriever, "With --human-qrels (repeatable, at least 5): a system ranking both question sets: bm25[:VARIANT[:k1=..,b=..]], dense:EMBEDDER[:INDEX_SPEC] or hybrid:A+B (RRF).")] = None,
    metric: Annotated[str, o.text_option(o.STATISTICS, "--metric", "With --human-qrels: the metric that orders the systems, one METRIC@K.")] = "ndcg@10",
    top: Annotated[int, o.int_option(o.STATISTICS, "--top", "With --human-qrels: τ among the best N systems under the human qrels (2 to the number of --retriever).", 2, 10_000)] = 5,
    bootstrap: Annotated[int, o.retold(o.Bootstrap, "With --human-qrels: bootstrap resamples of the queries (seeded by --seed) for 95% intervals; 0 = no intervals.")] = 1000,
) -> None:
    """Write a test collection from a corpus: per sampled passage one LLM reply with a query and its
    reference answer, filtered (consistency, answerable, dedupe, copy, language), as a BEIR folder with
    answers.jsonl and a manifest. The cost is printed before any call; --max-calls is a hard cap."""
    if ctx.invoked_subcommand is not None:
        return
    missing = [flag for flag, value in (("--corpus", corpus), ("--out-dir", out_dir)) if value is None]
    if missing:
        from ragdiag.errors import RagdiagError

        raise RagdiagError(f"testset needs {', '.join(missing)} (or run 'ragdiag testset certify'); see ragdiag testset --help")
    if human_qrels is None and (retriever or human_queries is not None):
        from ragdiag.errors import RagdiagError

        flag = "--retriever" if retriever else "--human-queries"
        raise RagdiagError(f"{flag} is for the certificate: give --human-qrels too (or leave {flag} out)")
    assert corpus is not None and out_dir is not None
    config = client.config()
    with o.llm_run(client, o.ENGINE), o.reading_of(chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.testset import BuildOptions, HumanQrelsRequest, TestsetRequest, testset_run
        from ragdiag.report.testset_report import certificate_text, manifest_text

        options = BuildOptions(consistency_k=consistency_k, consistency_index=consistency_index, copy_n=copy_n, copy_max=copy_max,
                               dedupe_threshold=dedupe_threshold, label_pool=label_pool, pool=pool, max_calls=max_calls)
        manifest = testset_run(TestsetRequest(corpus, out_dir, config, n, per_doc, min_words, max_words, lang.value, kinds,
                                              examples, filters, options, client.seed, client.progress, dedupe_embedder,
                                              None if human_qrels is None else HumanQrelsRequest(
                                                  human_qrels, human_queries, list(retriever or []), metric, top, bootstrap)))
        typer.echo(manifest_text(manifest))
        if manifest.certificate is not None:
            typer.echo("")
            typer.echo(certificate_text(manifest.certificate))
