"""``ragdiag pipeline --corpus``: the options and rendering of the corpus path of ``pipeline``
(registered through :mod:`ragdiag.cli.pipeline`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from ragdiag.cli.params import INTEGER, PATH, TEXT
from ragdiag.errors import RagdiagError

if TYPE_CHECKING:
    from ragdiag.llm.client import ClientConfig
    from ragdiag.pipeline.answer_plan import AnswerSettings

CorpusOpt = Annotated[Optional[Path], typer.Option("--corpus", help="Rank your own corpus: BEIR corpus.jsonl, or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv); use with --retriever instead of --texts.", metavar=PATH)]
QueriesOpt = Annotated[Optional[Path], typer.Option("--queries", help="With --corpus: BEIR queries.jsonl (default: the --corpus folder's).", metavar=PATH)]
QrelsOpt = Annotated[Optional[Path], typer.Option("--qrels", help="With --corpus: qrels, BEIR or TREC (default: the folder's qrels/test.tsv).", metavar=PATH)]
RetrieverOpt = Annotated[Optional[list[str]], typer.Option("--retriever", help="With --corpus (repeatable): dense:EMBEDDER[:INDEX_SPEC] (e.g. dense:local:hnsw:M=16,efSearch=32), bm25[:VARIANT], or hybrid:A+B (RRF).", metavar=TEXT)]
DepthOpt = Annotated[Optional[int], typer.Option("--depth", help="With --corpus: passages retrieved per query (default: the largest K).", min=1, max=100_000, metavar=INTEGER)]
IdealCapOpt = Annotated[int, typer.Option("--ideal-cap", help="With --corpus: queries with more relevant passages than this are left out (the ideal answer uses them all).", min=1, max=1000, metavar=INTEGER)]
MaxQueriesOpt = Annotated[Optional[int], typer.Option("--max-queries", help="With --corpus: use only the first N judged queries.", min=1, max=10**7, metavar=INTEGER)]
EmbedBaseUrlOpt = Annotated[Optional[str], typer.Option("--embed-base-url", help="With --corpus: server URL for openai:/voyage: embedders (--base-url is the chat model's).", metavar=TEXT)]


def check_corpus_flags(corpus: Path | None, retriever: list[str] | None, texts: str | None, ranked: str | None,
                       embedder: str | None) -> None:
    """--corpus and --texts are two different inputs; --retriever belongs to --corpus."""
    if corpus is None:
        if retriever:
            raise RagdiagError("--retriever needs --corpus (your corpus, queries and qrels)")
        if texts is None:
            raise RagdiagError("give --texts (with --ranked or --embedder), or --corpus with --retriever")
        return
    if texts is not None or ranked is not None or embedder is not None:
        raise RagdiagError("--corpus ranks your own corpus: it does not take --texts, --ranked or --embedder")
    if not retriever:
        raise RagdiagError("--corpus needs at least one --retriever, e.g. --retriever dense:local --retriever bm25")


def corpus_pipeline(corpus: Path, queries: Path | None, qrels: Path | None, retriever: list[str], ks: list[int],
                    out_dir: Path, depth: int | None, ideal_cap: int, max_queries: int | None,
                    embed_base_url: str | None, repeats: int, judges: list[str], segments: str, min_samples: int,
                    config: ClientConfig, min_coverage: float, progress: bool, grading: Any = None,
                    settings: AnswerSettings | None = None, complete_cases: bool = False) -> None:
    """Run :func:`ragdiag.pipeline.corpus_run.run_corpus_pipeline` and print its summaries."""
    from rich.console import Console

    from ragdiag.cli.llm_options import render_summary
    from ragdiag.pipeline.corpus_run import CorpusRunConfig, run_corpus_pipeline
    from ragdiag.pipeline.run_meta import check_coverage
    from ragdiag.report.correlate_report import print_report

    cfg = CorpusRunConfig(corpus=corpus, retrievers=retriever, ks=ks, out_dir=out_dir, queries=queries, qrels=qrels,
                          depth=depth, ideal_cap=ideal_cap, max_queries=max_queries, embed_base_url=embed_base_url,
                          repeats=repeats, judges=judges, segments=segments, min_samples=min_samples, grading=grading,
                          answer=settings, complete_cases=complete_cases)
    result = run_corpus_pipeline(cfg, config, progress)
    meta = result.summary
    queries_used = meta["queries"]
    typer.echo(f"{meta['dataset']}: {queries_used['used']} queries ({queries_used['left_out']} left out: more relevant "
               f"passages than --ideal-cap {meta['ideal_cap']}), {meta['ranked_samples']} ranked samples from "
               f"{len(meta['retrievers'])} retrievers at depth {meta['depth']}", err=True)
    pipe = result.pipeline
    render_summary("generate", pipe.generated.summary, {"answers": pipe.paths["answers"]})
    render_summary("grade", pipe.graded.summary, {"graded": pipe.paths["graded"]})
    print_report(pipe.correlation, Console())
    if result.evaluation is not None:
        typer.echo(f"evaluate (graded qrels): {result.paths['evaluation']}")
    typer.echo(f"samples, runs and manifest in {out_dir} ({result.paths['manifest'].name})")
    check_coverage(pipe.graded.summary, min_coverage, pipe.graded.manifest)
