"""The closed choices (``str`` enums, shown as ``[a|b]``) and the one default of each shared concept."""

from __future__ import annotations

from enum import Enum


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



class GradeMode(str, Enum):
    """How the judge's grade is read: the digit it writes, or the expected value of its digit probabilities."""

    digit = "digit"
    logprobs = "logprobs"



class EngineKind(str, Enum):
    """Where the embedding and LLM calls the caches lack run (``--engine``)."""

    local = "local"
    ray = "ray"


class LlmBackend(str, Enum):
    """Who answers the LLM calls on Ray workers (``--llm-backend``)."""

    openai = "openai"
    vllm = "vllm"


class PromptLang(str, Enum):
    """Language of the generation and grading prompts; auto = per question."""

    auto = "auto"
    en = "en"
    fr = "fr"


class FitMode(str, Enum):
    """How --max-prompt-tokens cuts a prompt's references."""

    truncate = "truncate"
    drop = "drop"


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
DEFAULT_LONG_ANSWER_RATIO = 5.0  # ragdiag.data.reference_gate.DEFAULT_LONG_RATIO (a test keeps them equal)
DEFAULT_TOP_LOGPROBS = 10
DEFAULT_RAY_WORKERS = 2  # ragdiag.engine.settings.EngineSettings.ray_workers (a test keeps them equal)
DEFAULT_MAX_ANSWER_TOKENS = 512  # = ragdiag.llm.context_budget.ANSWER_RESERVE (tests/cli/test_output_limits.py)
DEFAULT_LANG, DEFAULT_FIT, DEFAULT_CHARS_PER_TOKEN = PromptLang.auto, FitMode.truncate, 3.0
# the batch and engine defaults of ragdiag.llm.batch_files and ragdiag.engine.settings (tests keep them equal)
DEFAULT_BATCH_POLL = 5.0
DEFAULT_BATCH_MAX_REQUESTS = 50_000
DEFAULT_BATCH_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_RAY_ADDRESS = "auto"
