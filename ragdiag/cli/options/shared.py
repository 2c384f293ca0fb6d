"""The shared option declarations of the data side: inputs, retrieval, statistics and outputs.

A command declares ``k: K = DEFAULT_K``; the LLM side is :mod:`ragdiag.cli.options.llm`. One name,
one help text, one range and one panel per concept; metavars are explicit so ``--help`` reads the
same on every typer version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli.options.choices import (
    ByView,
    Dataset,
    Device,
    Metric,
    OutputFormat,
    RetrievalMode,
    Segmentation,
    TableFormat,
)
from ragdiag.cli.options.declare import (
    INPUT,
    INTEGER,
    OUTPUT,
    PATH,
    RETRIEVAL,
    SEED_MAX,
    STATISTICS,
    TEXT,
    checked_by,
    choices_metavar,
    float_option,
    option,
    retold,
)
from ragdiag.cli.options.group import OptionGroup
from ragdiag.io.lists import list_callback, parse_deltas, parse_ks
from ragdiag.measures import registry as measure_registry

Seed = Annotated[int, option(STATISTICS, "--seed", help="Random seed (printed with the result).", min=0, max=SEED_MAX, metavar=INTEGER)]
K = Annotated[int, option(RETRIEVAL, "--k", help="Cut-off K: passages per query.", min=1, max=100_000, metavar=INTEGER)]
Ks = Annotated[str, option(RETRIEVAL, "--ks", help="Cut-offs K, comma-separated, e.g. 2,3,5.", metavar=TEXT, callback=list_callback(parse_ks, "--ks"))]
MetricOpt = Annotated[Metric, option(RETRIEVAL,
    "--metric", metavar=choices_metavar(Metric),
    help="Vector similarity; cosine suits text embedders. For .npy vectors, ip searches by inner product "
         "(robustness's former default; same ranking as cosine on unit-length vectors) and l2 by distance "
         "(e.g. SIFT).")]
Deltas = Annotated[str, option(STATISTICS, "--delta", help="δ values of Robustness-δ@K (share of queries with recall ≥ δ), comma-separated, each in (0, 1].", metavar=TEXT, callback=list_callback(parse_deltas, "--delta"))]
Embedder = Annotated[str, option(RETRIEVAL, "--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL.", metavar=TEXT, envvar="RAGDIAG_EMBEDDER", show_envvar=False)]
Embedders = Annotated[list[str], option(RETRIEVAL, "--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL; repeat to compare.", metavar=TEXT, envvar="RAGDIAG_EMBEDDER", show_envvar=False)]
Lang = Annotated[str, option(INPUT, "--lang", help="en, fr or en,fr.", metavar=TEXT)]
FORMAT_RULE = ("With --out, the file's suffix picks its format (.json, .csv, .txt/.md = table; other suffixes: JSON) "
               "unless --format is given, and the terminal still shows the result and one 'wrote PATH' line.")
FormatOpt = Annotated[Optional[OutputFormat], option(OUTPUT, "--format", help=f"What to print: a table (default), JSON or CSV. {FORMAT_RULE}", metavar=choices_metavar(OutputFormat), show_default=False)]
TableFormatOpt = Annotated[Optional[TableFormat], option(OUTPUT, "--format", help=f"What to print: a table (default) or JSON. {FORMAT_RULE}", metavar=choices_metavar(TableFormat), show_default=False)]
Progress = Annotated[bool, option(OUTPUT, "--progress/--no-progress", help="Show progress on stderr.")]
Quiet = Annotated[bool, option(OUTPUT, "--quiet", help="With --out: print only the 'wrote PATH' line, not the table.")]

# Inputs
Corpus = Annotated[Path, option(INPUT, "--corpus", help="Corpus: JSONL, JSON list, CSV, TSV or Parquet with id, text and optional title fields (BEIR corpus.jsonl, a BEIR folder), or a folder of documents (.txt, .md, .html, .pdf) cut into passages 'path#n'.", metavar=PATH)]
Queries = Annotated[Path, option(INPUT, "--queries", help="Questions: JSONL, JSON list, CSV, TSV or Parquet with id and query fields (BEIR queries.jsonl), or a text file, one question a line.", metavar=PATH)]
QueryVectors = Annotated[Optional[Path], option(INPUT, "--query-vectors", help="Query vectors Q.npy (m × dim).", metavar=PATH)]
BaseVectors = Annotated[Optional[Path], option(INPUT, "--base-vectors", help="Base vectors X.npy (n × dim).", metavar=PATH)]
Qrels = Annotated[Optional[Path], option(INPUT, "--qrels", help="Qrels: BEIR TSV (query-id corpus-id score, header optional) or TREC (qid 0 docid rel), sniffed by column count.", metavar=PATH)]
Run = Annotated[Optional[Path], option(INPUT, "--run", help="Run file: run.jsonl from 'ragdiag retrieve' or a TREC run (qid Q0 docid rank score tag).", metavar=PATH)]

# A corpus given as a BEIR folder (sweep, pipeline --corpus): queries and qrels default to the folder's
CorpusFolder = Annotated[Path, option(INPUT, "--corpus", help="BEIR corpus.jsonl (or any corpus file), a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), or a folder of documents (.txt, .md, .html, .pdf; passages 'path#n', with --queries and --qrels).", metavar=PATH)]
FolderQueries = Annotated[Optional[Path], option(INPUT, "--queries", help="BEIR queries.jsonl (default: the --corpus folder's).", metavar=PATH)]
IdCol = Annotated[Optional[str], option(INPUT, "--id-col", help="The query-id column of a per-query table.", metavar=TEXT)]
MaxQueries = Annotated[Optional[int], option(INPUT, "--max-queries", help="Use only the first N judged queries.", min=1, max=10**7, metavar=INTEGER)]
EmbedBaseUrl = Annotated[Optional[str], option(RETRIEVAL, "--embed-base-url", help="Server URL for openai:/voyage: embedders (the --base-url option is the chat model's).", metavar=TEXT)]
Retriever = Annotated[Optional[list[str]], option(RETRIEVAL, "--retriever", help="With --corpus (repeatable): dense:EMBEDDER[:INDEX_SPEC] (e.g. dense:local:hnsw:M=16,efSearch=32), bm25[:VARIANT], or hybrid:A+B (RRF).", metavar=TEXT)]
Depth = Annotated[Optional[int], option(RETRIEVAL, "--depth", help="With --corpus: passages retrieved per query (default: the largest K).", min=1, max=100_000, metavar=INTEGER)]
IdealCap = Annotated[int, option(INPUT, "--ideal-cap", help="At most this many relevant passages make the ideal answer (and the gold control).", min=1, max=1000, metavar=INTEGER)]
IndexDir = Annotated[Path, option(INPUT, "--index-dir", help="Index folder written by 'ragdiag index build'.", metavar=PATH)]
IndexSpec = Annotated[str, option(RETRIEVAL, "--index-spec", help="Index spec, e.g. flat, hnsw:M=16,efConstruction=100,efSearch=64, ivf:nlist=1024,nprobe=8.", metavar=TEXT)]
Backend = Annotated[str, option(RETRIEVAL, "--backend", help="Vector store for the dense index: faiss, pgvector:postgresql://USER@HOST/DB (any libpq URL) or pgvector:embedded[:DIR] (bundled PostgreSQL + pgvector); pgvector takes pg-hnsw, pg-ivfflat or pg-exact specs.", metavar=TEXT)]
IndexSpecs = Annotated[list[str], option(RETRIEVAL, "--index-spec", help="Index spec (repeatable); a|b|c sweeps a search parameter, e.g. 'hnsw:M=16,efSearch=16|64|256'.", metavar=TEXT)]

# Outputs
Out = Annotated[Optional[Path], option(OUTPUT, "--out", help="Write the result here; its suffix picks the format (.json, .csv, .txt/.md = table; else JSON) unless --format is given.", metavar=PATH)]
OutRequired = Annotated[Path, option(OUTPUT, "--out", help="File to write the result to.", metavar=PATH)]
PerQuery = Annotated[Optional[Path], option(OUTPUT, "--per-query", help="Write one JSON line per (point, query).", metavar=PATH)]
Json = Annotated[bool, option(OUTPUT, "--json", help="Print JSON instead of a table.")]
JsonAlias = Annotated[bool, option(OUTPUT, "--json", help="The same as --format json.")]
GradedParquet = Annotated[bool, option(OUTPUT, "--parquet", help="Write the graded table as graded.parquet (columnar, needs pyarrow) instead of graded.json.")]
OutDir = Annotated[Path, option(OUTPUT, "--out-dir", help="Folder to write the outputs into (created if missing).", metavar=PATH)]
Plot = Annotated[Optional[Path], option(OUTPUT, "--plot", help="PNG file to draw the plot into (.png).", metavar=PATH)]
PlotDir = Annotated[Optional[Path], option(OUTPUT, "--plot-dir", help="Folder to write the PNG plots into (created if missing).", metavar=PATH)]
TableJsonOut = Annotated[Optional[Path], retold(Out, "Write the result here instead of stdout; its suffix picks the format (.json, .txt/.md = table; else JSON) unless --format is given.")]

# Answers, graded samples and human grades
Human = Annotated[Optional[Path], option(INPUT, "--human", help="Human graded qrels (1–5): confusion matrix, quadratic-weighted Cohen's κ, Krippendorff's α, mean |difference| on shared pairs.", metavar=PATH)]
# the budget plan (calibrate --plan, compare --plan): prices in any one currency, and what to spend or reach
PriceCall = Annotated[Optional[float], float_option(STATISTICS, "--price-call", "--plan: price of one LLM call (an answer or one judge grade), in any currency; without it, the judge model's known price from the grade manifest beside the graded file(s).", 0.0, 1e6, lo_open=True, optional=True)]
PriceHuman = Annotated[Optional[float], float_option(STATISTICS, "--price-human", "--plan: price of one human label, same currency.", 0.0, 1e6, lo_open=True, optional=True)]
PlanBudget = Annotated[Optional[float], float_option(STATISTICS, "--budget", "--plan: the spend to allocate (the narrowest interval it buys); at least one human label.", 0.0, 1e9, lo_open=True, optional=True)]
TargetWidth = Annotated[Optional[float], float_option(STATISTICS, "--target-width", "--plan: the interval width to reach at the least cost (grades 1–5).", 0.0, 4.0, lo_open=True, optional=True)]
Graded = Annotated[Optional[Path], option(INPUT, "--graded", help="A local samples_graded file (JSON list or JSONL, .gz allowed; or .parquet, read columnar) instead of --dataset.", metavar=PATH)]
Answers = Annotated[Path, option(INPUT, "--answers", help="Answers file written by ragdiag generate.", metavar=PATH)]

# Answer inputs (generate, grade, pipeline)
Texts = Annotated[str, option(INPUT, "--texts", help="Texts samples: JSON/JSONL file, hub-layout folder, or hf:[REPO].", metavar=TEXT)]
Ranked = Annotated[Optional[str], option(INPUT, "--ranked", help="Ranked samples: file, folder or hf:[REPO] (or rank with --embedder).", metavar=TEXT)]
RankEmbedder = Annotated[Optional[str], option(RETRIEVAL, "--embedder", help="Rank the texts' candidates with this embedder (local, st:NAME, openai:MODEL, voyage:MODEL) instead of --ranked.", metavar=TEXT)]
DatasetOpt = Annotated[Dataset, option(INPUT, "--dataset", help="Subset of primer-ai/retrieval-response.", metavar=choices_metavar(Dataset))]

# Correlation
MinSamples = Annotated[int, option(STATISTICS, "--min-samples", help="Drop segments with fewer rows (paper: 300).", min=1, max=10**9, metavar=INTEGER)]
Segments = Annotated[Segmentation, option(STATISTICS, "--segments", help="ratio: E^subset^KtoN^round(K/Np,1); nw: E^subset^1 when Np ≤ K (wide) else 0; pooled: E^subset, all rows together (small sets).", metavar=choices_metavar(Segmentation))]
Measures = Annotated[str, option(STATISTICS, "--measures", help=measure_registry.MEASURES_HELP, metavar=TEXT, callback=checked_by("ragdiag.measures.registry", "parse_measures"))]
AlphaGrid = Annotated[str, option(STATISTICS, "--alpha-grid", help="lN^B (0, 1, B^i and 1−B^i for i ≤ N, numpy.logspace), a0^a1^step (numpy.arange, end excluded) or ia0^a1^step (end included); at most 100,000 values.", metavar=TEXT, callback=checked_by("ragdiag.metrics.alpha_grid", "parse_alpha_grid"))]
Xk = Annotated[float, float_option(STATISTICS, "--xk", "E estimates Np by the positives in the top round(xk·K).", 0.0, 1000.0, lo_open=True)]
Compare = Annotated[Optional[str], option(STATISTICS, "--compare", help="Two measures, e.g. T,F: paired difference of their maxima per segment.", metavar=TEXT, callback=checked_by("ragdiag.io.lists", "parse_pair"))]
By = Annotated[Optional[ByView], option(STATISTICS, "--by", help="config: system-level view per (E, subset, K).", metavar=choices_metavar(ByView))]
Bootstrap = Annotated[int, option(STATISTICS, "--bootstrap", help="Bootstrap resamples of the queries (seeded by --seed) for 95% intervals; 0 = off.", min=0, max=1_000_000, metavar=INTEGER)]

# Retrieval and index benchmarks
DeviceOpt = Annotated[Device, option(RETRIEVAL, "--device", help="Where local/st: models run: auto (cuda, else mps, else cpu), cpu, cuda or mps.", metavar=choices_metavar(Device))]
BatchSize = Annotated[Optional[int], option(RETRIEVAL, "--batch-size", help="Texts per embedding call (default 128 for local/st: models; API embedders keep their own limit when not given).", min=1, max=100_000, metavar=INTEGER)]
Chunk = Annotated[Optional[str], option(RETRIEVAL, "--chunk", help="Split documents into passages of TOKENS tokens (the model's tokenizer), OVERLAP tokens shared between neighbours, e.g. 200:50; a document scores its best passage.", metavar="TOKENS[:OVERLAP]")]
Mode = Annotated[RetrievalMode, option(RETRIEVAL, "--mode", help="dense, bm25 or hybrid (reciprocal rank fusion).", metavar=choices_metavar(RetrievalMode))]
RrfK = Annotated[int, option(RETRIEVAL, "--rrf-k", help="RRF constant k (hybrid): score = Σ 1/(k + rank).", min=0, max=1_000_000, metavar=INTEGER)]
Candidates = Annotated[int, option(RETRIEVAL, "--candidates", help="Depth of each list fused in hybrid mode.", min=1, max=1_000_000, metavar=INTEGER)]
LatencyQueries = Annotated[int, option(RETRIEVAL, "--latency-queries", help="Queries timed one by one for latency.", min=1, max=10_000_000, metavar=INTEGER)]
BenchRepeats = Annotated[int, option(RETRIEVAL, "--qps-repeats", help="Repeats of the batch QPS measurement (median reported).", min=1, max=1000, metavar=INTEGER)]
Threads = Annotated[Optional[int], option(RETRIEVAL, "--threads", help="faiss OpenMP threads (default: all cores).", min=1, max=4096, metavar=INTEGER)]
TieAware = Annotated[bool, option(RETRIEVAL, "--tie-aware", help="Count returned items tied with the K-th true distance.")]

# Probes
Runs = Annotated[int, option(STATISTICS, "--runs", help="Runs with fresh impostors and template jitter.", min=1, max=10_000, metavar=INTEGER)]
Variants = Annotated[int, option(STATISTICS, "--variants", help="Noisy variants per query and level.", min=1, max=1000, metavar=INTEGER)]
Epsilon = Annotated[float, float_option(STATISTICS, "--epsilon", "Exclude queries with |base Δ_name| < ε from % change.", 0.0, 1.0)]

# Reference-quality gate and probability-weighted grades (issue 20; docs/methods.md)
DegeneratePatterns = Annotated[Optional[Path], option(INPUT, "--degenerate-patterns", help="JSON file of extra refusal and prompt-echo patterns, same layout as the bundled prompts/degenerate-patterns.v1.json: {\"refusal\": {\"en\": list of regexes, \"fr\": ...}, \"prompt_echo\": {...}}; added to the bundled lists.", metavar=PATH)]
LongAnswerRatio = Annotated[float, float_option(INPUT, "--long-answer-ratio", "An answer longer than this many times the median answer length (characters, answers of the same kind) is degenerate (too_long).", 1.5, 1000.0)]
KeepDegenerate = Annotated[bool, option(INPUT, "--keep-degenerate", help="Use rows whose ideal answer is degenerate (refusal, prompt echo, ...) instead of leaving them out: grade sends them to the judge, correlate keeps them; they are still counted.")]
CompleteCases = Annotated[bool, option(
    STATISTICS, "--complete-cases",
    help="Correlate only the queries graded at every K (missing answers are likelier at large K); the verdict says "
         "which rows it used.")]


@dataclass(frozen=True)
class ProbeOutputGroup(OptionGroup):
    """What the probes (names, noise) print and write: a table or JSON, ``--out``, ``--quiet``, ``--plot``."""

    fmt: TableFormatOpt = None
    out: TableJsonOut = None
    quiet: Quiet = False
    plot: Plot = None

    @property
    def format(self) -> str | None:
        """``--format``'s value (None: a table, or the suffix of ``--out``)."""
        return self.fmt.value if self.fmt else None


PROBE_OUTPUT = ProbeOutputGroup()
