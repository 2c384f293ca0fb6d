"""``ragdiag sweep``: what each ANN operating point costs the answers (exact, gold and empty controls)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import answer_options as ao
from ragdiag.cli import params as p
from ragdiag.cli.llm_options import llm_command, render_summary
from ragdiag.cli.params import (
    DEFAULT_DELTAS,
    FLOAT,
    INTEGER,
    TEXT,
    Deltas,
    Embedder,
    OutDir,
    finite_float,
)

if TYPE_CHECKING:  # the client is imported when the command runs (light `ragdiag --help`)
    from ragdiag.commands.sweep import AnswerSettings, ClientConfig, GradingOptions

SweepQrels = p.retold(p.Qrels, "Qrels, BEIR (query-id corpus-id score) or TREC (qid 0 docid rel) (default: the folder's qrels/test.tsv).")
SweepIndex = p.retold(p.IndexSpecs, "Index spec to sweep (repeatable; --index is the same); a|b|c sweeps a search parameter, e.g. 'hnsw:M=16,efConstruction=100,efSearch=4|8|16|32|64', 'ivf:nlist=256,nprobe=1|2|4|8'.", also=("--index",))
SweepK = Annotated[int, typer.Option("--k", help="Passages per query given to the generator (top-K).", min=1, max=1000, metavar=INTEGER)]
Controls = Annotated[str, typer.Option("--controls", help="Controls, comma list of exact (required), gold, empty.", metavar=TEXT)]
MaxDrop = Annotated[Optional[float], typer.Option("--max-drop", help="Largest mean grade drop from exact the recommendation may accept. Range [0, 4].", metavar=FLOAT, callback=finite_float(0.0, 4.0, optional=True))]
PlotFlag = Annotated[bool, typer.Option("--plot/--no-plot", help="Also write sweep_grade.png and sweep_qps.png into --out-dir.")]
SweepRepeats = p.retold(p.BenchRepeats, "Repeats of the batch QPS measurement (median and min–max reported); raised, up to 200, until 1,000 query searches are timed.")
SweepAnswers = p.retold(p.Answers, "Reference answers from the dataset, JSON lines {\"query_id\" (or \"_id\"): ID, \"answer\": TEXT} or {..., \"answers\": [TEXT, ...]} (e.g. MS MARCO answers, SQuAD spans): every point and the exact, gold and empty controls are graded against them (highest grade over a query's answers) instead of an ideal answer generated from the relevant passages; only queries with an answer are swept. Without it the gold control is not informative and is left out.", kind=Optional[Path])
AccuracyThreshold = Annotated[float, typer.Option("--accuracy-threshold", help="An answer counts as correct when its grade is at least this (accuracy and accuracy relative to exact k-NN per recall bucket). Range [1, 5].", metavar=FLOAT, callback=finite_float(1.0, 5.0))]
PerQueryParquet = p.retold(p.GradedParquet, "Write the per-query grades as per_query.parquet (columnar, needs pyarrow; read by correlate --table) instead of per_query.jsonl.")


@llm_command
def sweep(
    corpus: p.CorpusFolder,
    index: SweepIndex,
    out_dir: OutDir,
    queries: p.FolderQueries = None,
    qrels: SweepQrels = None,
    embedder: Embedder = "local",
    k: SweepK = 10,
    controls: Controls = "exact,gold,empty",
    delta: Deltas = DEFAULT_DELTAS,
    bootstrap: p.Bootstrap = 1000,
    max_drop: MaxDrop = None,
    max_calls: p.MaxCalls = None,
    max_queries: p.MaxQueries = None,
    ideal_cap: p.IdealCap = 10,
    plot: PlotFlag = False,
    latency_queries: p.LatencyQueries = 1000,
    qps_repeats: SweepRepeats = 3,
    embed_base_url: p.EmbedBaseUrl = None,
    answers: SweepAnswers = None,
    accuracy_threshold: AccuracyThreshold = 4.0,
    grading: GradingOptions = ao.GRADING,
    answer: AnswerSettings = ao.ANSWER,
    parquet: PerQueryParquet = False,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Answer quality per ANN operating point: recall, Robustness-δ@K, QPS, grade, and the paired drop from exact."""
    from rich.console import Console

    from ragdiag.commands.sweep import CONTROLS, SweepRequest, check_coverage
    from ragdiag.commands.sweep import run as run_sweep
    from ragdiag.io.lists import parse_deltas
    from ragdiag.options import parse_choices
    from ragdiag.report.sweep_accuracy import print_relative_accuracy
    from ragdiag.report.sweep_report import print_sweep

    request = SweepRequest(corpus=corpus, index=index, queries=queries, qrels=qrels, embedder=embedder, k=k,
                           controls=tuple(parse_choices(controls, CONTROLS, "control", "--controls")),
                           deltas=parse_deltas(delta), bootstrap=bootstrap, seed=config.seed, ideal_cap=ideal_cap,
                           max_drop=max_drop, max_calls=max_calls, max_queries=max_queries,
                           latency_queries=latency_queries, repeats=qps_repeats, embed_base_url=embed_base_url,
                           grading=grading, answer=answer, answers=answers, accuracy_threshold=accuracy_threshold,
                           llm=config, out_dir=out_dir, plot=plot, progress=progress, parquet=parquet)
    done = run_sweep(request)
    console = Console()
    print_sweep(done.result, console)
    print_relative_accuracy(done.result, console)
    render_summary("ragdiag sweep", done.summary, done.paths)
    check_coverage(done.summary, min_coverage, done.paths["answers"])
