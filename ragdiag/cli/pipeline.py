"""``ragdiag pipeline``: rank → generate → grade → correlate in one command (``--corpus``: your own
corpus, queries and qrels ranked by ``--retriever`` specs; see :mod:`ragdiag.commands.pipeline`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.io.lists import parse_ks
from ragdiag.report.llm_summary import render_summary

if TYPE_CHECKING:
    from ragdiag.commands.pipeline import CorpusRunResult, PipelineResult

TextsOpt = Annotated[Optional[str], o.retold(o.Texts, "Texts samples: JSON/JSONL file, hub-layout folder, or hf:[REPO] (or rank your own corpus with --corpus).")]
CorpusOpt = Annotated[Optional[Path], o.retold(o.CorpusFolder, "Rank your own corpus: BEIR corpus.jsonl (or any corpus file), a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), or a folder of documents (passages 'path#n'); use with --retriever instead of --texts.")]
QrelsOpt = Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus: qrels, BEIR or TREC (default: the folder's qrels/test.tsv).")]
RetrieverOpt = o.Retriever
DepthOpt = o.Depth
IdealCapOpt = Annotated[int, o.retold(o.IdealCap, "With --corpus: queries with more relevant passages than this are left out (the ideal answer uses them all).")]
EmbedBaseUrlOpt = Annotated[Optional[str], o.retold(o.EmbedBaseUrl, "With --corpus: server URL for openai:/voyage: embedders (--base-url is the chat model's).")]


def pipeline(
    out_dir: o.OutDir,
    texts: TextsOpt = None,
    ranked: o.Ranked = None,
    embedder: o.RankEmbedder = None,
    ks: o.Ks = o.DEFAULT_KS,
    dataset: o.DatasetOpt = o.Dataset.all,
    client: o.ClientGroup = o.CLIENT,
    repeats: o.Repeats = o.DEFAULT_REPEATS,
    second_judge: o.SecondJudge = None,
    segments: o.Segments = o.Segmentation.ratio,
    min_samples: o.MinSamples = o.DEFAULT_MIN_SAMPLES,
    corpus: CorpusOpt = None,
    queries: Annotated[Optional[Path], o.given(o.FolderQueries, "--corpus")] = None,
    qrels: QrelsOpt = None,
    retriever: RetrieverOpt = None,
    depth: DepthOpt = None,
    ideal_cap: IdealCapOpt = 10,
    max_queries: Annotated[Optional[int], o.given(o.MaxQueries, "--corpus")] = None,
    embed_base_url: EmbedBaseUrlOpt = None,
    grading: o.GradingGroup = o.GRADING,
    parquet: o.GradedParquet = False,
    answer: o.AnswerGroup = o.ANSWER,
    complete_cases: o.CompleteCases = False,
    engine: o.EngineGroup = o.ENGINE,
    fields: o.Fields = None,
    queries_format: o.QueriesFormat = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
) -> None:
    """Generate answers, grade them and correlate retrieval measures with the grades (files in --out-dir:
    answers.jsonl, graded.json or with --parquet graded.parquet, correlation.json)."""
    config = client.config()
    settings = answer.settings()
    grading_options = grading.options()
    with o.llm_run(client, engine), o.reading_of(fields, queries=queries_format, chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands import pipeline as command

        request = command.PipelineRequest(
            out_dir=out_dir, config=config, ks=tuple(sorted(parse_ks(ks, "--ks"))), texts=texts, ranked=ranked,
            embedder=embedder, dataset=dataset.value, repeats=repeats, second_judge=second_judge, segments=segments.value,
            min_samples=min_samples, corpus=corpus, queries=queries, qrels=qrels, retrievers=tuple(retriever or ()),
            depth=depth, ideal_cap=ideal_cap, max_queries=max_queries, embed_base_url=embed_base_url, grading=grading_options,
            parquet=parquet, answer=settings, complete_cases=complete_cases, progress=client.progress)
        result = command.run(request)
        pipe = result.pipeline if isinstance(result, command.CorpusRunResult) else result
        try:  # the gate is checked before anything is printed: a verdict never shows as if it held
            command.check_coverage(pipe.graded.summary, client.min_coverage, pipe.graded.manifest_path)
            failure = None
        except command.CoverageError as err:
            failure = err
        if isinstance(result, command.CorpusRunResult):
            _render_corpus_run(result, out_dir, failure)
        else:
            _render_stages(pipe, failure)
            typer.echo(f"correlation written to {pipe.paths['correlation']} "
                       f"(same as: {pipe.pipeline_meta.equivalent_command})")
        if failure is not None:
            raise failure



def _render_stages(pipe: PipelineResult, failure: Exception | None = None) -> None:
    """The generate and grade summaries, then the correlation report (``failure``: the failed
    coverage gate, printed first, and the verdict withheld)."""
    from rich.console import Console

    from ragdiag.report.correlate_report import print_report

    render_summary("generate", pipe.generated.summary, {"answers": pipe.paths["answers"]})
    render_summary("grade", pipe.graded.summary, {"graded": pipe.paths["graded"]})
    if failure is not None:
        Console(stderr=True).print(f"ragdiag: coverage gate failed: {failure}", style="bold red", highlight=False)
    print_report(pipe.correlation, Console(), withheld=f"coverage gate failed ({failure})" if failure else None)


def _render_corpus_run(result: CorpusRunResult, out_dir: Path, failure: Exception | None = None) -> None:
    """What was ranked (stderr), the stages, and where the corpus run wrote."""
    meta = result.summary
    typer.echo(f"{meta.dataset}: {meta.queries.used} queries ({meta.queries.left_out} left out: more relevant "
               f"passages than --ideal-cap {meta.ideal_cap}), {meta.ranked_samples} ranked samples from "
               f"{len(meta.retrievers)} retrievers at depth {meta.depth}", err=True)
    _render_stages(result.pipeline, failure)
    if result.evaluation is not None:
        typer.echo(f"evaluate (graded qrels): {result.paths['evaluation']}")
    typer.echo(f"samples, runs and manifest in {out_dir} ({result.paths['manifest'].name})")
