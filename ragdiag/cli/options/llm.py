"""The shared option declarations of the LLM side, and the option groups the LLM commands share.

Groups (:mod:`ragdiag.cli.options.group`: each a frozen dataclass of declarations, taken by a command
as one parameter, ``client: o.ClientGroup = o.CLIENT``, and handed to it as that typed object):

- :class:`ClientGroup` (``--model`` … ``--batch-max-bytes``, ``--min-coverage``, ``--progress``) →
  ``.config()`` (a ``ClientConfig``): every LLM command (generate, grade, label, pipeline, sweep, triage);
- :class:`AnswerGroup` (``--lang`` … ``--max-answer-tokens``) → ``.settings()``: generate, pipeline,
  sweep, triage;
- :class:`GradingGroup` (``--grade-mode`` … ``--long-answer-ratio``) → ``.options()``: grade, pipeline,
  sweep, triage;
- :class:`EngineGroup` (``--engine`` … ``--llm-backend``) → ``.settings()``, entered with
  ``.activate()`` (or :func:`llm_run` for the LLM commands): every embedding and LLM command.

Defaults equal the library's (tests keep them equal); the library types are imported only when a
command runs, so ``ragdiag --help`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

from ragdiag.cli.options.choices import (
    DEFAULT_BATCH_MAX_BYTES,
    DEFAULT_BATCH_MAX_REQUESTS,
    DEFAULT_BATCH_POLL,
    DEFAULT_CACHE_MODE,
    DEFAULT_CHARS_PER_TOKEN,
    DEFAULT_FIT,
    DEFAULT_LANG,
    DEFAULT_LONG_ANSWER_RATIO,
    DEFAULT_MAX_ANSWER_TOKENS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MIN_COVERAGE,
    DEFAULT_MODEL,
    DEFAULT_RAY_ADDRESS,
    DEFAULT_RAY_WORKERS,
    DEFAULT_SEED,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT,
    DEFAULT_TOP_LOGPROBS,
    DEFAULT_WORKERS,
    BatchMode,
    CacheMode,
    EngineKind,
    FitMode,
    GradeMode,
    LlmBackend,
    PromptLang,
)
from ragdiag.cli.options.declare import (
    BATCH,
    ENGINE_PANEL,
    INPUT,
    INTEGER,
    LLM,
    LLM_CLIENT,
    PATH,
    PROMPT_BUDGET,
    RETRIEVAL,
    SEED_MAX,
    TEXT,
    checked_by,
    choices_metavar,
    float_option,
    int_option,
    option,
    retold,
)
from ragdiag.cli.options.group import OptionGroup
from ragdiag.cli.options.shared import DegeneratePatterns, KeepDegenerate, LongAnswerRatio, Progress

if TYPE_CHECKING:
    from ragdiag.commands.generate import ClientConfig
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions
    from ragdiag.engine.settings import EngineSettings

# ---------------------------------------------------------------- the client (every LLM command)

CacheDir = Annotated[Optional[Path], option(LLM_CLIENT, "--cache-dir", help="Cache folder (default $RAGDIAG_CACHE_DIR or the user cache dir).", metavar=PATH)]
Cache = Annotated[CacheMode, option(LLM_CLIENT, "--cache", help="rw | replay (never touches the network) | off | refresh.", metavar=choices_metavar(CacheMode))]
BaseUrl = Annotated[Optional[str], option(LLM, "--base-url", help="OpenAI-compatible server URL (default $OPENAI_BASE_URL, else the provider's).", metavar=TEXT, envvar="RAGDIAG_BASE_URL", show_envvar=False)]
Model = Annotated[str, option(LLM, "--model", help="Chat model name.", metavar=TEXT, envvar="RAGDIAG_MODEL", show_envvar=False)]
RequestSeed = Annotated[int, option(LLM_CLIENT, "--seed", help="Seed sent with every request (printed with the result).", min=0, max=SEED_MAX, metavar=INTEGER)]
Workers = Annotated[int, option(LLM_CLIENT, "--workers", help="Concurrent requests.", min=1, max=256, metavar=INTEGER, envvar="RAGDIAG_WORKERS", show_envvar=False)]
Temperature = Annotated[float, float_option(LLM_CLIENT, "--temperature", "Sampling temperature.", 0.0, 2.0)]
MaxRetries = Annotated[int, option(LLM_CLIENT, "--max-retries", help="Retries per request on 429, 5xx and timeouts.", min=0, max=100, metavar=INTEGER)]
Timeout = Annotated[float, float_option(LLM_CLIENT, "--timeout", "Seconds to wait for one reply before retrying.", 0.0, 86_400.0, lo_open=True)]
Rpm = Annotated[Optional[int], option(LLM_CLIENT, "--rpm", help="Client-side limit: requests per minute.", min=1, max=10_000_000, metavar=INTEGER)]
Tpm = Annotated[Optional[int], option(LLM_CLIENT, "--tpm", help="Client-side limit: tokens per minute (estimated as chars/4).", min=1, max=10**12, metavar=INTEGER)]
Prices = Annotated[Optional[Path], option(LLM_CLIENT, "--prices", help="JSON price table {model: {input, output}} in USD per 1M tokens.", metavar=PATH, envvar="RAGDIAG_PRICES", show_envvar=False)]
Batch = Annotated[Optional[BatchMode], option(BATCH, "--batch", help="Send the cache misses as OpenAI Batch API files (custom_id = cache key): openai (Files + Batches API: upload, poll, collect into the cache) or vllm-file (write the file for `vllm run-batch`, then `ragdiag batch collect DIR --from OUTPUT`). A rerun resumes.", metavar=choices_metavar(BatchMode))]
BatchDir = Annotated[Optional[Path], option(BATCH, "--batch-dir", help="Folder of the batch files, their upload and batch ids (default CACHE_DIR/batches); a rerun resumes from it.", metavar=PATH)]
BatchWait = Annotated[Optional[float], float_option(BATCH, "--batch-wait", "Seconds to wait for openai batches before stopping with the command that resumes (default: until they end; 0: submit and stop).", 0.0, 30 * 86_400.0, optional=True)]
BatchPoll = Annotated[float, float_option(BATCH, "--batch-poll", "First wait between batch status checks, in seconds (then x1.5 each time, up to 60 s).", 0.0, 3600.0, lo_open=True)]
BatchMaxRequests = Annotated[int, option(BATCH, "--batch-max-requests", help="Requests per batch file (OpenAI's limit: 50,000); more are split into several files.", min=1, max=50_000, metavar=INTEGER)]
BatchMaxBytes = Annotated[int, option(BATCH, "--batch-max-bytes", help="Bytes per batch file (OpenAI's limit: 200 MB = 209715200); more are split into several files.", min=1, max=200 * 1024 * 1024, metavar=INTEGER)]
MinCoverage = Annotated[float, float_option(LLM_CLIENT, "--min-coverage", "Exit 3 when fewer than this share of items succeed.", 0.0, 1.0)]
# the same cache and server options where embeddings use them (index, retrieve, robustness, probes), and
# the cache folder a cache or batch admin command works on
EmbeddingCacheDir = Annotated[Optional[Path], retold(CacheDir, panel=RETRIEVAL)]
EmbeddingCache = Annotated[CacheMode, retold(Cache, panel=RETRIEVAL)]
EmbeddingBaseUrl = Annotated[Optional[str], retold(BaseUrl, panel=RETRIEVAL)]
AdminCacheDir = Annotated[Optional[Path], retold(CacheDir, panel=INPUT)]

# ---------------------------------------------------------------- runs of LLM calls

MaxCalls = Annotated[Optional[int], option(LLM, "--max-calls", help="Refuse, before any call, a run needing more new LLM calls than this.", min=0, max=10**9, metavar=INTEGER)]
Repeats = Annotated[int, option(LLM, "--repeats", help="Judge each answer N times (distinct cache entries).", min=1, max=100, metavar=INTEGER)]
SecondJudge = Annotated[Optional[str], option(LLM, "--second-judge", help="Another judge model, for agreement between judges.", metavar=TEXT)]
GradeModeOpt = Annotated[GradeMode, option(LLM, "--grade-mode", help="digit: the grade the judge writes (JSON reply); logprobs: one token with top_logprobs, grade = expected value over the digits 1-5 (G-Eval), distribution kept as grade_probs. The server must return logprobs.", metavar=choices_metavar(GradeMode))]
TopLogprobs = Annotated[int, option(LLM, "--top-logprobs", help="With --grade-mode logprobs: how many most likely first tokens to ask for (top_logprobs).", min=5, max=20, metavar=INTEGER)]

# ---------------------------------------------------------------- answers: language and prompt budget

AnswerLang = Annotated[PromptLang, option(
    LLM, "--lang", metavar=choices_metavar(PromptLang),
    help="Language of the generation and grading prompts: en, fr, or auto = per question, detected from its "
         "words (French and English function words, French accents); the choice is recorded per row as lang.")]
GradeLang = Annotated[PromptLang, retold(
    AnswerLang, "Language of the grading prompts: en, fr, or auto = each answers row's lang (written by generate), "
                "else detected from the question; recorded per graded row as lang.")]
MaxPromptTokens = Annotated[Optional[str], option(
    PROMPT_BUDGET, "--max-prompt-tokens", metavar=TEXT,
    callback=checked_by("ragdiag.answers.plan", "parse_max_prompt_tokens"),
    help="Fit each generation prompt into N tokens (1 to 10000000) by cutting its references (--fit); auto = the "
         "model's context length read from the server's /models (else, for each item the server refuses, the context "
         "length its error states) minus 512 tokens for the answer. Default: no budget (a context error fails its item and names this option).")]
Fit = Annotated[FitMode, option(
    PROMPT_BUDGET, "--fit", metavar=choices_metavar(FitMode),
    help="With --max-prompt-tokens: truncate = every passage keeps the same share of its tokens; drop = leave out "
         "the lowest-ranked passages first. What was cut is recorded per row (cut).")]
Tokenizer = Annotated[Optional[Path], option(
    PROMPT_BUDGET, "--tokenizer", metavar=PATH,
    help="The model's tokenizer.json (or its folder) to count prompt tokens; default: tiktoken for OpenAI model "
         "names when available, else the --chars-per-token estimate.")]
MaxAnswerTokens = Annotated[int, int_option(PROMPT_BUDGET, "--max-answer-tokens", f"Output limit of each generation call, in tokens (sent as max_tokens, or "
    f"max_completion_tokens on OpenAI's API); also the answer reserve of --max-prompt-tokens auto. An answer that hits "
    f"it is kept, marked and flagged as the degenerate kind truncated. Default {DEFAULT_MAX_ANSWER_TOKENS}.",
    1, 131072)]
CharsPerToken = Annotated[float, float_option(PROMPT_BUDGET, "--chars-per-token", "Token estimate when the model's tokenizer is unknown: characters per token.", 0.5, 20.0)]

# ---------------------------------------------------------------- the engine (every embedding and LLM command)

EngineOpt = Annotated[EngineKind, option(ENGINE_PANEL, "--engine", help="Where the embeddings and LLM calls the caches lack run: local (this process) or ray (a Ray cluster: an actor pool of --ray-workers; this process still writes the caches, so results and cache are the same). Needs the ray extra.", metavar=choices_metavar(EngineKind))]
RayAddress = Annotated[str, option(ENGINE_PANEL, "--ray-address", help="With --engine ray: the cluster (host:port or ray://host:port); auto = $RAY_ADDRESS or a running cluster, else a local instance started for the run and stopped after it; local = always a new local instance.", metavar=TEXT)]
RayWorkers = Annotated[int, option(ENGINE_PANEL, "--ray-workers", help="With --engine ray: workers (actors) in the pool; each holds one embedder or one LLM client.", min=1, max=1024, metavar=INTEGER)]
GpusPerWorker = Annotated[float, float_option(ENGINE_PANEL, "--gpus-per-worker", "With --engine ray: GPUs each worker reserves (0 = CPU; fractions share a GPU).", 0.0, 64.0)]
LlmBackendOpt = Annotated[LlmBackend, option(ENGINE_PANEL, "--llm-backend", help="With --engine ray: openai = ragdiag's client to --base-url on each worker (retries, rate limits, prices); vllm = the model runs in ray.data.llm's vLLM processor on GPU workers.", metavar=choices_metavar(LlmBackend))]

# ---------------------------------------------------------------- the groups: fields in --help order, and what they build


@dataclass(frozen=True)
class ClientGroup(OptionGroup):
    """The LLM client's options, then ``--min-coverage`` and ``--progress``: every LLM command."""

    model: Model = DEFAULT_MODEL
    base_url: BaseUrl = None
    cache_dir: CacheDir = None
    cache: Cache = DEFAULT_CACHE_MODE
    workers: Workers = DEFAULT_WORKERS
    seed: RequestSeed = DEFAULT_SEED
    temperature: Temperature = DEFAULT_TEMPERATURE
    max_retries: MaxRetries = DEFAULT_MAX_RETRIES
    timeout: Timeout = DEFAULT_TIMEOUT
    rpm: Rpm = None
    tpm: Tpm = None
    prices: Prices = None
    batch: Batch = None
    batch_dir: BatchDir = None
    batch_wait: BatchWait = None
    batch_poll: BatchPoll = DEFAULT_BATCH_POLL
    batch_max_requests: BatchMaxRequests = DEFAULT_BATCH_MAX_REQUESTS
    batch_max_bytes: BatchMaxBytes = DEFAULT_BATCH_MAX_BYTES
    min_coverage: MinCoverage = DEFAULT_MIN_COVERAGE
    progress: Progress = True

    def config(self) -> ClientConfig:
        """The LLM client's settings (checked again there)."""
        from ragdiag.commands.generate import ClientConfig

        return ClientConfig(
            model=self.model, base_url=self.base_url, cache_dir=self.cache_dir, cache=self.cache.value,
            workers=self.workers, seed=self.seed, temperature=self.temperature, max_retries=self.max_retries,
            timeout=self.timeout, rpm=self.rpm, tpm=self.tpm, prices=self.prices,
            batch=self.batch.value if self.batch is not None else None, batch_dir=self.batch_dir,
            batch_wait=self.batch_wait, batch_poll=self.batch_poll, batch_max_requests=self.batch_max_requests,
            batch_max_bytes=self.batch_max_bytes)


@dataclass(frozen=True)
class AnswerGroup(OptionGroup):
    """Prompt language and budget of the answers: generate, pipeline, sweep, triage."""

    lang: AnswerLang = DEFAULT_LANG
    max_prompt_tokens: MaxPromptTokens = None
    fit: Fit = DEFAULT_FIT
    tokenizer: Tokenizer = None
    chars_per_token: CharsPerToken = DEFAULT_CHARS_PER_TOKEN
    max_answer_tokens: MaxAnswerTokens = DEFAULT_MAX_ANSWER_TOKENS

    def settings(self) -> AnswerSettings:
        """The answer settings (checked again there)."""
        from ragdiag.commands.pipeline import AnswerSettings

        return AnswerSettings.from_options(self.lang.value, self.max_prompt_tokens, self.fit.value, self.tokenizer,
                                           self.chars_per_token, self.max_answer_tokens)


@dataclass(frozen=True)
class GradingGroup(OptionGroup):
    """How answers are gated and graded: grade, pipeline, sweep, triage."""

    grade_mode: GradeModeOpt = GradeMode.digit
    top_logprobs: TopLogprobs = DEFAULT_TOP_LOGPROBS
    keep_degenerate: KeepDegenerate = False
    degenerate_patterns: DegeneratePatterns = None
    long_answer_ratio: LongAnswerRatio = DEFAULT_LONG_ANSWER_RATIO

    def options(self) -> GradingOptions:
        """The grading options of the answer engine."""
        from ragdiag.commands.pipeline import GradingOptions

        return GradingOptions(self.grade_mode.value, self.top_logprobs, self.degenerate_patterns,
                              self.long_answer_ratio, self.keep_degenerate)


@dataclass(frozen=True)
class EngineGroup(OptionGroup):
    """Where embedding and LLM work runs: every embedding and LLM command."""

    engine: EngineOpt = EngineKind.local
    ray_address: RayAddress = DEFAULT_RAY_ADDRESS
    ray_workers: RayWorkers = DEFAULT_RAY_WORKERS
    gpus_per_worker: GpusPerWorker = 0.0
    llm_backend: LlmBackendOpt = LlmBackend.openai

    def settings(self) -> EngineSettings:
        """The engine settings (checked again there); ``with engine.settings().activate():`` runs on it."""
        from ragdiag.engine.settings import EngineSettings

        return EngineSettings(self.engine.value, self.ray_address, self.ray_workers, self.gpus_per_worker,
                              self.llm_backend.value)


CLIENT, ANSWER, GRADING, ENGINE = ClientGroup(), AnswerGroup(), GradingGroup(), EngineGroup()


@contextmanager
def llm_run(client: ClientGroup, engine: EngineGroup) -> Iterator[None]:
    """Run an LLM command's body on ``engine``; after it, a run whose replies came from ragdiag's test
    server says so on its last line (stderr)."""
    from ragdiag.report.provenance import marked_replies

    before = marked_replies()
    with engine.settings().activate():
        yield
    _say_if_test_server(client.model, marked_replies() - before)


def _say_if_test_server(model: str, marked: int = 0) -> None:
    from rich.console import Console

    from ragdiag.report.provenance import test_server_line

    line = test_server_line([model], marked)
    if line:
        Console(stderr=True).print(line, style="bold red", highlight=False)
