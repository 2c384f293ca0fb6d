"""The shared option vocabulary: one name, one help text, one default and one range per concept.

Every command declares its options with these ``Annotated`` types (``k: K = DEFAULT_K``) so that
an option means the same thing everywhere. Conventions:

- one cut-off is ``--k`` (INTEGER); several cut-offs are ``--ks`` (comma list);
- a file written is ``--out``, a folder written is ``--out-dir``; a PNG file is ``--plot``, a
  folder of plots ``--plot-dir``;
- a BEIR queries file is ``--queries``, a ``.npy`` of query vectors ``--query-vectors``, a
  count of queries ``--n-queries``; an index folder is ``--index-dir``, an index description
  ``--index-spec``;
- closed choices are ``str`` enums (``--metric``, ``--format``, ``--segments``, ``--cache``,
  ``--mode``); numeric options carry a range checked before any work starts, and floats reject
  nan and ±inf.

Metavars are given explicitly (INTEGER, FLOAT, TEXT, PATH, ``[a|b]``) so ``--help`` reads the
same on every typer version. A flag is declared here once; a command that describes it in its own
words uses :func:`retold`, :func:`with_note` or :func:`given`, which keep its flag, range and check.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional, get_args

import typer

from ragdiag.io.lists import list_callback, parse_deltas, parse_ks
from ragdiag.measures import registry as measure_registry

INTEGER, FLOAT, TEXT, PATH = "INTEGER", "FLOAT", "TEXT", "PATH"
SEED_MAX = 2**32 - 1


def choices_metavar(enum: type[Enum]) -> str:
    """``[a|b|c]``, click's conventional metavar for a closed choice."""
    return "[" + "|".join(str(member.value) for member in enum) + "]"


def _interval(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    left = "(" if lo_open or lo is None else "["
    right = ")" if hi_open or hi is None else "]"
    return f"{left}{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}{right}"


def finite_float(
    lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False,
    optional: bool = False,
) -> Callable[[Optional[float]], Optional[float]]:
    """A typer callback accepting only finite floats in the interval (rejects nan, ±inf)."""
    where = _interval(lo, hi, lo_open, hi_open)

    def check(value: Optional[float]) -> Optional[float]:
        if value is None and optional:
            return value
        if value is None or not math.isfinite(value):
            raise typer.BadParameter(f"{value} is not a finite number; expected a number in {where}")
        too_low = lo is not None and (value <= lo if lo_open else value < lo)
        too_high = hi is not None and (value >= hi if hi_open else value > hi)
        if too_low or too_high:
            raise typer.BadParameter(f"{value:g} is out of range; expected a number in {where}")
        return value

    check.interval = where  # type: ignore[attr-defined]
    return check


def _float_option(flag: str, help_text: str, lo: float | None = None, hi: float | None = None, *,
                  lo_open: bool = False, hi_open: bool = False, optional: bool = False, **extra):
    check = finite_float(lo, hi, lo_open=lo_open, hi_open=hi_open, optional=optional)
    return typer.Option(flag, help=f"{help_text} Range {check.interval}.", metavar=FLOAT, callback=check, **extra)


def path_option(flag: str, help_text: str, **extra):
    """A command's own file or folder option (metavar PATH)."""
    return typer.Option(flag, help=help_text, metavar=PATH, **extra)


def text_option(flag: str, help_text: str, **extra):
    """A command's own free-text option (metavar TEXT)."""
    return typer.Option(flag, help=help_text, metavar=TEXT, **extra)


def int_option(flag: str, help_text: str, lo: int, hi: int, **extra):
    """A command's own integer option, range [lo, hi] checked before any work."""
    return typer.Option(flag, help=help_text, metavar=INTEGER, min=lo, max=hi, **extra)


def float_option(flag: str, help_text: str, lo: float | None = None, hi: float | None = None, *,
                 lo_open: bool = False, hi_open: bool = False, optional: bool = False, **extra):
    """A command's own float option: finite and within the interval, checked before any work."""
    return _float_option(flag, help_text, lo, hi, lo_open=lo_open, hi_open=hi_open, optional=optional, **extra)


def retold(decl: Any, help_text: str, *, kind: Any = None, also: tuple[str, ...] = ()) -> Any:
    """A shared declaration in a command's own words: the same flag, metavar, range and check, with
    this help text; ``kind`` another value type (a list, an optional value), ``also`` more flag names."""
    shared_kind, info = get_args(decl)[:2]
    info = copy.copy(info)
    info.help = help_text
    info.param_decls = (*info.param_decls, *also)
    return Annotated[shared_kind if kind is None else kind, info]


def with_note(decl: Any, sentence: str) -> Any:
    """A shared declaration whose help says one thing more for this command (a sentence after it)."""
    return retold(decl, f"{get_args(decl)[1].help} {sentence}")


def given(decl: Any, flag: str) -> Any:
    """A shared declaration that applies only with ``flag``: its help starts "With FLAG: "."""
    text = get_args(decl)[1].help
    lead = text if text.split(" ", 1)[0].isupper() else text[:1].lower() + text[1:]
    return retold(decl, f"With {flag}: {lead}")


def checked_by(module: str, function: str) -> Callable[[Optional[str]], Optional[str]]:
    """A typer callback running a library parser (imported on use) on the value, so a bad value is a
    one-line usage error before any work; the value itself is passed on unchanged."""

    def check(value: Optional[str]) -> Optional[str]:
        if value is None:
            return value
        from importlib import import_module

        from ragdiag.errors import RagdiagError

        try:
            getattr(import_module(module), function)(value)
        except RagdiagError as err:
            raise typer.BadParameter(str(err)) from None
        return value

    return check


# ---------------------------------------------------------------- closed choices


class Metric(str, Enum):
    """Vector similarity: inner product, cosine (normalised inner product) or L2 distance."""

    ip = "ip"
    cosine = "cosine"
    l2 = "l2"


class OutputFormat(str, Enum):
    """What a command prints (and writes with ``--out``): a rich table, JSON or CSV."""

    table = "table"
    json = "json"
    csv = "csv"


class TableFormat(str, Enum):
    """Output format of commands that have no CSV form."""

    table = "table"
    json = "json"


class Segmentation(str, Enum):
    """How correlate splits rows into segments (docs/methods.md#3-correlation-analysis); pooled keeps one
    segment per embedder and subset."""

    ratio = "ratio"
    nw = "nw"
    pooled = "pooled"


class CacheMode(str, Enum):
    """How remote calls use the request cache."""

    rw = "rw"
    replay = "replay"
    off = "off"
    refresh = "refresh"


class BatchMode(str, Enum):
    """How ``--batch`` sends the cache misses."""

    openai = "openai"
    vllm_file = "vllm-file"


class CacheKind(str, Enum):
    """Which cache an admin command works on."""

    llm = "llm"
    embeddings = "embeddings"
    all = "all"


class RetrievalMode(str, Enum):
    """Dense (vector index), BM25, or both fused by reciprocal rank fusion."""

    dense = "dense"
    bm25 = "bm25"
    hybrid = "hybrid"


class CorrelationKind(str, Enum):
    """Correlation coefficients computed by correlate (the comma list of ``--corr`` uses these names)."""

    spearman = "spearman"
    pearson = "pearson"
    kendall_b = "kendall_b"
    kendall_c = "kendall_c"


class Dataset(str, Enum):
    """A subset of primer-ai/retrieval-response (paper 003), or all of them."""

    msmarco = "msmarco"
    arxiv = "arxiv"
    hotpotqa_p = "hotpotqa-p"
    hotpotqa_s = "hotpotqa-s"
    nq = "nq"
    all = "all"


class ByView(str, Enum):
    """Extra views of correlate: config = system-level view per (E, subset, K)."""

    config = "config"


class Device(str, Enum):
    """Where sentence-transformers models run; auto picks a GPU when torch sees one."""

    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"
    mps = "mps"


class Language(str, Enum):
    """Language of BM25 stopwords and of the probe banks."""

    en = "en"
    fr = "fr"


# ---------------------------------------------------------------- defaults (one per concept)

DEFAULT_K = 10
DEFAULT_KS = "2,3,5"
DEFAULT_METRIC = Metric.cosine
DEFAULT_DELTAS = "0.1,0.3,0.5,0.7,0.9"  # docs/methods.md#4-robustness
DEFAULT_EMBEDDER = "local"
DEFAULT_SEED = 0
DEFAULT_MIN_SAMPLES = 300
DEFAULT_CACHE_MODE = CacheMode.rw
# the LLM client's defaults (ragdiag.llm.client.ClientConfig; a test keeps them equal), here so that
# `ragdiag --help` does not import the remote-call stack
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_WORKERS = 4
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_TIMEOUT = 120.0
DEFAULT_MIN_COVERAGE = 0.95
DEFAULT_REPEATS = 1
DEFAULT_RRF_K = 60
DEFAULT_CANDIDATES = 100

# ---------------------------------------------------------------- shared concepts

Seed = Annotated[int, typer.Option("--seed", help="Random seed (printed with the result).", min=0, max=SEED_MAX, metavar=INTEGER)]
K = Annotated[int, typer.Option("--k", help="Cut-off K: passages per query.", min=1, max=100_000, metavar=INTEGER)]
Ks = Annotated[str, typer.Option("--ks", help="Cut-offs K, comma-separated, e.g. 2,3,5.", metavar=TEXT, callback=list_callback(parse_ks, "--ks"))]
MetricOpt = Annotated[Metric, typer.Option(
    "--metric", metavar=choices_metavar(Metric),
    help="Vector similarity; cosine suits text embedders. For .npy vectors, ip searches by inner product "
         "(robustness's former default; same ranking as cosine on unit-length vectors) and l2 by distance "
         "(e.g. SIFT).")]
Deltas = Annotated[str, typer.Option("--delta", help="δ values of Robustness-δ@K (share of queries with recall ≥ δ), comma-separated, each in (0, 1].", metavar=TEXT, callback=list_callback(parse_deltas, "--delta"))]
Embedder = Annotated[str, typer.Option("--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL.", metavar=TEXT, envvar="RAGDIAG_EMBEDDER", show_envvar=False)]
Embedders = Annotated[list[str], typer.Option("--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL; repeat to compare.", metavar=TEXT, envvar="RAGDIAG_EMBEDDER", show_envvar=False)]
Lang = Annotated[str, typer.Option("--lang", help="en, fr or en,fr.", metavar=TEXT)]
FORMAT_RULE = ("With --out, the file's suffix picks its format (.json, .csv, .txt/.md = table; other suffixes: JSON) "
               "unless --format is given, and the terminal still shows the result and one 'wrote PATH' line.")
FormatOpt = Annotated[Optional[OutputFormat], typer.Option("--format", help=f"What to print: a table (default), JSON or CSV. {FORMAT_RULE}", metavar=choices_metavar(OutputFormat), show_default=False)]
TableFormatOpt = Annotated[Optional[TableFormat], typer.Option("--format", help=f"What to print: a table (default) or JSON. {FORMAT_RULE}", metavar=choices_metavar(TableFormat), show_default=False)]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress on stderr.")]
Quiet = Annotated[bool, typer.Option("--quiet", help="With --out: print only the 'wrote PATH' line, not the table.")]

# Inputs
Corpus = Annotated[Path, typer.Option("--corpus", help="BEIR corpus.jsonl (_id, title, text) or its folder.", metavar=PATH)]
Queries = Annotated[Path, typer.Option("--queries", help="BEIR queries.jsonl (_id, text).", metavar=PATH)]
QueryVectors = Annotated[Optional[Path], typer.Option("--query-vectors", help="Query vectors Q.npy (m × dim).", metavar=PATH)]
BaseVectors = Annotated[Optional[Path], typer.Option("--base-vectors", help="Base vectors X.npy (n × dim).", metavar=PATH)]
Qrels = Annotated[Optional[Path], typer.Option("--qrels", help="Qrels: BEIR TSV (query-id corpus-id score, header optional) or TREC (qid 0 docid rel), sniffed by column count.", metavar=PATH)]
Run = Annotated[Optional[Path], typer.Option("--run", help="Run file: run.jsonl from 'ragdiag retrieve' or a TREC run (qid Q0 docid rank score tag).", metavar=PATH)]
# A corpus given as a BEIR folder (sweep, pipeline --corpus): queries and qrels default to the folder's
CorpusFolder = Annotated[Path, typer.Option("--corpus", help="BEIR corpus.jsonl, or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv).", metavar=PATH)]
FolderQueries = Annotated[Optional[Path], typer.Option("--queries", help="BEIR queries.jsonl (default: the --corpus folder's).", metavar=PATH)]
IdCol = Annotated[Optional[str], typer.Option("--id-col", help="The query-id column of a per-query table.", metavar=TEXT)]
MaxQueries = Annotated[Optional[int], typer.Option("--max-queries", help="Use only the first N judged queries.", min=1, max=10**7, metavar=INTEGER)]
EmbedBaseUrl = Annotated[Optional[str], typer.Option("--embed-base-url", help="Server URL for openai:/voyage: embedders (the --base-url option is the chat model's).", metavar=TEXT)]
MaxCalls = Annotated[Optional[int], typer.Option("--max-calls", help="Refuse, before any call, a run needing more new LLM calls than this.", min=0, max=10**9, metavar=INTEGER)]
Retriever = Annotated[Optional[list[str]], typer.Option("--retriever", help="With --corpus (repeatable): dense:EMBEDDER[:INDEX_SPEC] (e.g. dense:local:hnsw:M=16,efSearch=32), bm25[:VARIANT], or hybrid:A+B (RRF).", metavar=TEXT)]
Depth = Annotated[Optional[int], typer.Option("--depth", help="With --corpus: passages retrieved per query (default: the largest K).", min=1, max=100_000, metavar=INTEGER)]
IdealCap = Annotated[int, typer.Option("--ideal-cap", help="At most this many relevant passages make the ideal answer (and the gold control).", min=1, max=1000, metavar=INTEGER)]
IndexDir = Annotated[Path, typer.Option("--index-dir", help="Index folder written by 'ragdiag index build'.", metavar=PATH)]
IndexSpec = Annotated[str, typer.Option("--index-spec", help="Index spec, e.g. flat, hnsw:M=16,efConstruction=100,efSearch=64, ivf:nlist=1024,nprobe=8.", metavar=TEXT)]
Backend = Annotated[str, typer.Option("--backend", help="Vector store for the dense index: faiss, pgvector:postgresql://USER@HOST/DB (any libpq URL) or pgvector:embedded[:DIR] (bundled PostgreSQL + pgvector); pgvector takes pg-hnsw, pg-ivfflat or pg-exact specs.", metavar=TEXT)]
IndexSpecs = Annotated[list[str], typer.Option("--index-spec", help="Index spec (repeatable); a|b|c sweeps a search parameter, e.g. 'hnsw:M=16,efSearch=16|64|256'.", metavar=TEXT)]

# Outputs
Out = Annotated[Optional[Path], typer.Option("--out", help="Write the result here; its suffix picks the format (.json, .csv, .txt/.md = table; else JSON) unless --format is given.", metavar=PATH)]
OutRequired = Annotated[Path, typer.Option("--out", help="File to write the result to.", metavar=PATH)]
TableJsonOut = retold(Out, "Write the result here instead of stdout; its suffix picks the format (.json, .txt/.md = table; else JSON) unless --format is given.")
PerQuery = Annotated[Optional[Path], typer.Option("--per-query", help="Write one JSON line per (point, query).", metavar=PATH)]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
JsonAlias = Annotated[bool, typer.Option("--json", help="The same as --format json.")]
GradedParquet = Annotated[bool, typer.Option("--parquet", help="Write the graded table as graded.parquet (columnar, needs pyarrow) instead of graded.json.")]
OutDir = Annotated[Path, typer.Option("--out-dir", help="Folder to write the outputs into (created if missing).", metavar=PATH)]
Plot = Annotated[Optional[Path], typer.Option("--plot", help="PNG file to draw the plot into (.png).", metavar=PATH)]
PlotDir = Annotated[Optional[Path], typer.Option("--plot-dir", help="Folder to write the PNG plots into (created if missing).", metavar=PATH)]

# Caching and remote calls (LLM and API embedders)
CacheDir = Annotated[Optional[Path], typer.Option("--cache-dir", help="Cache folder (default $RAGDIAG_CACHE_DIR or the user cache dir).", metavar=PATH)]
Cache = Annotated[CacheMode, typer.Option("--cache", help="rw | replay (never touches the network) | off | refresh.", metavar=choices_metavar(CacheMode))]
BaseUrl = Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible server URL (default $OPENAI_BASE_URL, else the provider's).", metavar=TEXT, envvar="RAGDIAG_BASE_URL", show_envvar=False)]
Model = Annotated[str, typer.Option("--model", help="Chat model name.", metavar=TEXT, envvar="RAGDIAG_MODEL", show_envvar=False)]
RequestSeed = Annotated[int, typer.Option("--seed", help="Seed sent with every request (printed with the result).", min=0, max=SEED_MAX, metavar=INTEGER)]
Workers = Annotated[int, typer.Option("--workers", help="Concurrent requests.", min=1, max=256, metavar=INTEGER, envvar="RAGDIAG_WORKERS", show_envvar=False)]
Temperature = Annotated[float, _float_option("--temperature", "Sampling temperature.", 0.0, 2.0)]
MaxRetries = Annotated[int, typer.Option("--max-retries", help="Retries per request on 429, 5xx and timeouts.", min=0, max=100, metavar=INTEGER)]
Timeout = Annotated[float, _float_option("--timeout", "Seconds to wait for one reply before retrying.", 0.0, 86_400.0, lo_open=True)]
Rpm = Annotated[Optional[int], typer.Option("--rpm", help="Client-side limit: requests per minute.", min=1, max=10_000_000, metavar=INTEGER)]
Tpm = Annotated[Optional[int], typer.Option("--tpm", help="Client-side limit: tokens per minute (estimated as chars/4).", min=1, max=10**12, metavar=INTEGER)]
Prices = Annotated[Optional[Path], typer.Option("--prices", help="JSON price table {model: {input, output}} in USD per 1M tokens.", metavar=PATH, envvar="RAGDIAG_PRICES", show_envvar=False)]
Batch = Annotated[Optional[BatchMode], typer.Option("--batch", help="Send the cache misses as OpenAI Batch API files (custom_id = cache key): openai (Files + Batches API: upload, poll, collect into the cache) or vllm-file (write the file for `vllm run-batch`, then `ragdiag batch collect DIR --from OUTPUT`). A rerun resumes.", metavar=choices_metavar(BatchMode))]
BatchDir = Annotated[Optional[Path], typer.Option("--batch-dir", help="Folder of the batch files, their upload and batch ids (default CACHE_DIR/batches); a rerun resumes from it.", metavar=PATH)]
BatchWait = Annotated[Optional[float], _float_option("--batch-wait", "Seconds to wait for openai batches before stopping with the command that resumes (default: until they end; 0: submit and stop).", 0.0, 30 * 86_400.0, optional=True)]
BatchPoll = Annotated[float, _float_option("--batch-poll", "First wait between batch status checks, in seconds (then x1.5 each time, up to 60 s).", 0.0, 3600.0, lo_open=True)]
BatchMaxRequests = Annotated[int, typer.Option("--batch-max-requests", help="Requests per batch file (OpenAI's limit: 50,000); more are split into several files.", min=1, max=50_000, metavar=INTEGER)]
BatchMaxBytes = Annotated[int, typer.Option("--batch-max-bytes", help="Bytes per batch file (OpenAI's limit: 200 MB = 209715200); more are split into several files.", min=1, max=200 * 1024 * 1024, metavar=INTEGER)]
MinCoverage = Annotated[float, _float_option("--min-coverage", "Exit 3 when fewer than this share of items succeed.", 0.0, 1.0)]
Repeats = Annotated[int, typer.Option("--repeats", help="Judge each answer N times (distinct cache entries).", min=1, max=100, metavar=INTEGER)]

# Answers, graded samples and human grades
Human = Annotated[Optional[Path], typer.Option("--human", help="Human graded qrels (1–5): confusion matrix, quadratic-weighted Cohen's κ, Krippendorff's α, mean |difference| on shared pairs.", metavar=PATH)]
Graded = Annotated[Optional[Path], typer.Option("--graded", help="A local samples_graded file (JSON list or JSONL, .gz allowed; or .parquet, read columnar) instead of --dataset.", metavar=PATH)]
Answers = Annotated[Path, typer.Option("--answers", help="Answers file written by ragdiag generate.", metavar=PATH)]

# LLM inputs (generate, grade, pipeline)
Texts = Annotated[str, typer.Option("--texts", help="Texts samples: JSON/JSONL file, hub-layout folder, or hf:[REPO].", metavar=TEXT)]
Ranked = Annotated[Optional[str], typer.Option("--ranked", help="Ranked samples: file, folder or hf:[REPO] (or rank with --embedder).", metavar=TEXT)]
RankEmbedder = Annotated[Optional[str], typer.Option("--embedder", help="Rank the texts' candidates with this embedder (local, st:NAME, openai:MODEL, voyage:MODEL) instead of --ranked.", metavar=TEXT)]
DatasetOpt = Annotated[Dataset, typer.Option("--dataset", help="Subset of primer-ai/retrieval-response.", metavar=choices_metavar(Dataset))]
SecondJudge = Annotated[Optional[str], typer.Option("--second-judge", help="Another judge model, for agreement between judges.", metavar=TEXT)]

# Correlation
MinSamples = Annotated[int, typer.Option("--min-samples", help="Drop segments with fewer rows (paper: 300).", min=1, max=10**9, metavar=INTEGER)]
Segments = Annotated[Segmentation, typer.Option("--segments", help="ratio: E^subset^KtoN^round(K/Np,1); nw: E^subset^1 when Np ≤ K (wide) else 0; pooled: E^subset, all rows together (small sets).", metavar=choices_metavar(Segmentation))]
Measures = Annotated[str, typer.Option("--measures", help=measure_registry.MEASURES_HELP, metavar=TEXT, callback=checked_by("ragdiag.measures.registry", "parse_measures"))]
AlphaGrid = Annotated[str, typer.Option("--alpha-grid", help="lN^B (0, 1, B^i and 1−B^i for i ≤ N, numpy.logspace), a0^a1^step (numpy.arange, end excluded) or ia0^a1^step (end included); at most 100,000 values.", metavar=TEXT, callback=checked_by("ragdiag.metrics.alpha_grid", "parse_alpha_grid"))]
Xk = Annotated[float, _float_option("--xk", "E estimates Np by the positives in the top round(xk·K).", 0.0, 1000.0, lo_open=True)]
Compare = Annotated[Optional[str], typer.Option("--compare", help="Two measures, e.g. T,F: paired difference of their maxima per segment.", metavar=TEXT, callback=checked_by("ragdiag.options", "parse_pair"))]
By = Annotated[Optional[ByView], typer.Option("--by", help="config: system-level view per (E, subset, K).", metavar=choices_metavar(ByView))]
Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples of the queries (seeded by --seed) for 95% intervals; 0 = off.", min=0, max=1_000_000, metavar=INTEGER)]

# Retrieval and index benchmarks
DeviceOpt = Annotated[Device, typer.Option("--device", help="Where local/st: models run: auto (cuda, else mps, else cpu), cpu, cuda or mps.", metavar=choices_metavar(Device))]
BatchSize = Annotated[Optional[int], typer.Option("--batch-size", help="Texts per embedding call (default 128 for local/st: models; API embedders keep their own limit when not given).", min=1, max=100_000, metavar=INTEGER)]
Chunk = Annotated[Optional[str], typer.Option("--chunk", help="Split documents into passages of TOKENS tokens (the model's tokenizer), OVERLAP tokens shared between neighbours, e.g. 200:50; a document scores its best passage.", metavar="TOKENS[:OVERLAP]")]
Mode = Annotated[RetrievalMode, typer.Option("--mode", help="dense, bm25 or hybrid (reciprocal rank fusion).", metavar=choices_metavar(RetrievalMode))]
RrfK = Annotated[int, typer.Option("--rrf-k", help="RRF constant k (hybrid): score = Σ 1/(k + rank).", min=0, max=1_000_000, metavar=INTEGER)]
Candidates = Annotated[int, typer.Option("--candidates", help="Depth of each list fused in hybrid mode.", min=1, max=1_000_000, metavar=INTEGER)]
LatencyQueries = Annotated[int, typer.Option("--latency-queries", help="Queries timed one by one for latency.", min=1, max=10_000_000, metavar=INTEGER)]
BenchRepeats = Annotated[int, typer.Option("--qps-repeats", help="Repeats of the batch QPS measurement (median reported).", min=1, max=1000, metavar=INTEGER)]
Threads = Annotated[Optional[int], typer.Option("--threads", help="faiss OpenMP threads (default: all cores).", min=1, max=4096, metavar=INTEGER)]
TieAware = Annotated[bool, typer.Option("--tie-aware", help="Count returned items tied with the K-th true distance.")]

# Probes
Runs = Annotated[int, typer.Option("--runs", help="Runs with fresh impostors and template jitter.", min=1, max=10_000, metavar=INTEGER)]
Variants = Annotated[int, typer.Option("--variants", help="Noisy variants per query and level.", min=1, max=1000, metavar=INTEGER)]
Epsilon = Annotated[float, _float_option("--epsilon", "Exclude queries with |base Δ_name| < ε from % change.", 0.0, 1.0)]

# Reference-quality gate and probability-weighted grades (issue 20; docs/methods.md)


class GradeMode(str, Enum):
    """How the judge's grade is read: the digit it writes, or the expected value of its digit probabilities."""

    digit = "digit"
    logprobs = "logprobs"


DEFAULT_LONG_ANSWER_RATIO = 5.0  # ragdiag.data.reference_gate.DEFAULT_LONG_RATIO (a test keeps them equal)
DEFAULT_TOP_LOGPROBS = 10
DegeneratePatterns = Annotated[Optional[Path], typer.Option("--degenerate-patterns", help="JSON file of extra refusal and prompt-echo patterns, same layout as the bundled prompts/degenerate-patterns.v1.json: {\"refusal\": {\"en\": list of regexes, \"fr\": ...}, \"prompt_echo\": {...}}; added to the bundled lists.", metavar=PATH)]
LongAnswerRatio = Annotated[float, _float_option("--long-answer-ratio", "An answer longer than this many times the median answer length (characters, answers of the same kind) is degenerate (too_long).", 1.5, 1000.0)]
KeepDegenerate = Annotated[bool, typer.Option("--keep-degenerate", help="Use rows whose ideal answer is degenerate (refusal, prompt echo, ...) instead of leaving them out: grade sends them to the judge, correlate keeps them; they are still counted.")]
GradeModeOpt = Annotated[GradeMode, typer.Option("--grade-mode", help="digit: the grade the judge writes (JSON reply); logprobs: one token with top_logprobs, grade = expected value over the digits 1-5 (G-Eval), distribution kept as grade_probs. The server must return logprobs.", metavar=choices_metavar(GradeMode))]
TopLogprobs = Annotated[int, typer.Option("--top-logprobs", help="With --grade-mode logprobs: how many most likely first tokens to ask for (top_logprobs).", min=5, max=20, metavar=INTEGER)]


class EngineKind(str, Enum):
    """Where the embedding and LLM calls the caches lack run (``--engine``)."""

    local = "local"
    ray = "ray"


class LlmBackend(str, Enum):
    """Who answers the LLM calls on Ray workers (``--llm-backend``)."""

    openai = "openai"
    vllm = "vllm"


# The execution engine of the embedding and LLM layers (issue 33); the group: cli/engine_options.py
EngineOpt = Annotated[EngineKind, typer.Option("--engine", help="Where the embeddings and LLM calls the caches lack run: local (this process) or ray (a Ray cluster: an actor pool of --ray-workers; this process still writes the caches, so results and cache are the same). Needs the ray extra.", metavar=choices_metavar(EngineKind))]
RayAddress = Annotated[str, typer.Option("--ray-address", help="With --engine ray: the cluster (host:port or ray://host:port); auto = $RAY_ADDRESS or a running cluster, else a local instance started for the run and stopped after it; local = always a new local instance.", metavar=TEXT)]
RayWorkers = Annotated[int, typer.Option("--ray-workers", help="With --engine ray: workers (actors) in the pool; each holds one embedder or one LLM client.", min=1, max=1024, metavar=INTEGER)]
GpusPerWorker = Annotated[float, _float_option("--gpus-per-worker", "With --engine ray: GPUs each worker reserves (0 = CPU; fractions share a GPU).", 0.0, 64.0)]
LlmBackendOpt = Annotated[LlmBackend, typer.Option("--llm-backend", help="With --engine ray: openai = ragdiag's client to --base-url on each worker (retries, rate limits, prices); vllm = the model runs in ray.data.llm's vLLM processor on GPU workers.", metavar=choices_metavar(LlmBackend))]
DEFAULT_RAY_WORKERS = 2  # ragdiag.engine.settings.EngineSettings.ray_workers (a test keeps them equal)
