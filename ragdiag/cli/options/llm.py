"""The shared option declarations of the LLM side, and the option groups the LLM commands share.

Groups (each command lists the group's options as its own parameters, in this order, and builds the
group's value with one call, so every option is a typed parameter a checker sees):

- :data:`CLIENT` (``--model`` … ``--batch-max-bytes``) → :func:`client_config` (a ``ClientConfig``),
  then ``--min-coverage`` and ``--progress``: every LLM command (generate, grade, label, pipeline,
  sweep, triage);
- :data:`ANSWER` (``--lang`` … ``--max-answer-tokens``) → :func:`answer_settings`: generate,
  pipeline, sweep, triage;
- :data:`GRADING` (``--grade-mode`` … ``--long-answer-ratio``) → :func:`grading_options`: grade,
  pipeline, sweep, triage;
- :data:`ENGINE` (``--engine`` … ``--llm-backend``) → :func:`engine_settings`, entered with
  :func:`on_engine` (or :func:`llm_run` for the LLM commands): every embedding and LLM command.

Defaults equal the library's (tests keep them equal); the library types are imported only when a
command runs, so ``ragdiag --help`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

from ragdiag.cli.options.choices import (
    DEFAULT_MAX_ANSWER_TOKENS,
    BatchMode,
    CacheMode,
    EngineKind,
    FitMode,
    GradeMode,
    LlmBackend,
    PromptLang,
)
from ragdiag.cli.options.declare import (
    INPUT,
    INTEGER,
    LLM,
    OPTIONS,
    PATH,
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

if TYPE_CHECKING:
    from ragdiag.commands.generate import ClientConfig
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions
    from ragdiag.engine.settings import EngineSettings

# ---------------------------------------------------------------- the client (every LLM command)

CacheDir = Annotated[Optional[Path], option(LLM, "--cache-dir", help="Cache folder (default $RAGDIAG_CACHE_DIR or the user cache dir).", metavar=PATH)]
Cache = Annotated[CacheMode, option(LLM, "--cache", help="rw | replay (never touches the network) | off | refresh.", metavar=choices_metavar(CacheMode))]
BaseUrl = Annotated[Optional[str], option(LLM, "--base-url", help="OpenAI-compatible server URL (default $OPENAI_BASE_URL, else the provider's).", metavar=TEXT, envvar="RAGDIAG_BASE_URL", show_envvar=False)]
Model = Annotated[str, option(LLM, "--model", help="Chat model name.", metavar=TEXT, envvar="RAGDIAG_MODEL", show_envvar=False)]
RequestSeed = Annotated[int, option(LLM, "--seed", help="Seed sent with every request (printed with the result).", min=0, max=SEED_MAX, metavar=INTEGER)]
Workers = Annotated[int, option(LLM, "--workers", help="Concurrent requests.", min=1, max=256, metavar=INTEGER, envvar="RAGDIAG_WORKERS", show_envvar=False)]
Temperature = Annotated[float, float_option(LLM, "--temperature", "Sampling temperature.", 0.0, 2.0)]
MaxRetries = Annotated[int, option(LLM, "--max-retries", help="Retries per request on 429, 5xx and timeouts.", min=0, max=100, metavar=INTEGER)]
Timeout = Annotated[float, float_option(LLM, "--timeout", "Seconds to wait for one reply before retrying.", 0.0, 86_400.0, lo_open=True)]
Rpm = Annotated[Optional[int], option(LLM, "--rpm", help="Client-side limit: requests per minute.", min=1, max=10_000_000, metavar=INTEGER)]
Tpm = Annotated[Optional[int], option(LLM, "--tpm", help="Client-side limit: tokens per minute (estimated as chars/4).", min=1, max=10**12, metavar=INTEGER)]
Prices = Annotated[Optional[Path], option(LLM, "--prices", help="JSON price table {model: {input, output}} in USD per 1M tokens.", metavar=PATH, envvar="RAGDIAG_PRICES", show_envvar=False)]
Batch = Annotated[Optional[BatchMode], option(LLM, "--batch", help="Send the cache misses as OpenAI Batch API files (custom_id = cache key): openai (Files + Batches API: upload, poll, collect into the cache) or vllm-file (write the file for `vllm run-batch`, then `ragdiag batch collect DIR --from OUTPUT`). A rerun resumes.", metavar=choices_metavar(BatchMode))]
BatchDir = Annotated[Optional[Path], option(LLM, "--batch-dir", help="Folder of the batch files, their upload and batch ids (default CACHE_DIR/batches); a rerun resumes from it.", metavar=PATH)]
BatchWait = Annotated[Optional[float], float_option(LLM, "--batch-wait", "Seconds to wait for openai batches before stopping with the command that resumes (default: until they end; 0: submit and stop).", 0.0, 30 * 86_400.0, optional=True)]
BatchPoll = Annotated[float, float_option(LLM, "--batch-poll", "First wait between batch status checks, in seconds (then x1.5 each time, up to 60 s).", 0.0, 3600.0, lo_open=True)]
BatchMaxRequests = Annotated[int, option(LLM, "--batch-max-requests", help="Requests per batch file (OpenAI's limit: 50,000); more are split into several files.", min=1, max=50_000, metavar=INTEGER)]
BatchMaxBytes = Annotated[int, option(LLM, "--batch-max-bytes", help="Bytes per batch file (OpenAI's limit: 200 MB = 209715200); more are split into several files.", min=1, max=200 * 1024 * 1024, metavar=INTEGER)]
MinCoverage = Annotated[float, float_option(LLM, "--min-coverage", "Exit 3 when fewer than this share of items succeed.", 0.0, 1.0)]
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
    LLM, "--max-prompt-tokens", metavar=TEXT,
    callback=checked_by("ragdiag.answers.plan", "parse_max_prompt_tokens"),
    help="Fit each generation prompt into N tokens (1 to 10000000) by cutting its references (--fit); auto = the "
         "model's context length read from the server's /models (else, for each item the server refuses, the context "
         "length its error states) minus 512 tokens for the answer. Default: no budget (a context error fails its item and names this option).")]
Fit = Annotated[FitMode, option(
    LLM, "--fit", metavar=choices_metavar(FitMode),
    help="With --max-prompt-tokens: truncate = every passage keeps the same share of its tokens; drop = leave out "
         "the lowest-ranked passages first. What was cut is recorded per row (cut).")]
Tokenizer = Annotated[Optional[Path], option(
    LLM, "--tokenizer", metavar=PATH,
    help="The model's tokenizer.json (or its folder) to count prompt tokens; default: tiktoken for OpenAI model "
         "names when available, else the --chars-per-token estimate.")]
MaxAnswerTokens = Annotated[int, int_option(LLM, "--max-answer-tokens", f"Output limit of each generation call, in tokens (sent as max_tokens, or "
    f"max_completion_tokens on OpenAI's API); also the answer reserve of --max-prompt-tokens auto. An answer that hits "
    f"it is kept, marked and flagged as the degenerate kind truncated. Default {DEFAULT_MAX_ANSWER_TOKENS}.",
    1, 131072)]
CharsPerToken = Annotated[float, float_option(LLM, "--chars-per-token", "Token estimate when the model's tokenizer is unknown: characters per token.", 0.5, 20.0)]

# ---------------------------------------------------------------- the engine (every embedding and LLM command)

EngineOpt = Annotated[EngineKind, option(OPTIONS, "--engine", help="Where the embeddings and LLM calls the caches lack run: local (this process) or ray (a Ray cluster: an actor pool of --ray-workers; this process still writes the caches, so results and cache are the same). Needs the ray extra.", metavar=choices_metavar(EngineKind))]
RayAddress = Annotated[str, option(OPTIONS, "--ray-address", help="With --engine ray: the cluster (host:port or ray://host:port); auto = $RAY_ADDRESS or a running cluster, else a local instance started for the run and stopped after it; local = always a new local instance.", metavar=TEXT)]
RayWorkers = Annotated[int, option(OPTIONS, "--ray-workers", help="With --engine ray: workers (actors) in the pool; each holds one embedder or one LLM client.", min=1, max=1024, metavar=INTEGER)]
GpusPerWorker = Annotated[float, float_option(OPTIONS, "--gpus-per-worker", "With --engine ray: GPUs each worker reserves (0 = CPU; fractions share a GPU).", 0.0, 64.0)]
LlmBackendOpt = Annotated[LlmBackend, option(OPTIONS, "--llm-backend", help="With --engine ray: openai = ragdiag's client to --base-url on each worker (retries, rate limits, prices); vllm = the model runs in ray.data.llm's vLLM processor on GPU workers.", metavar=choices_metavar(LlmBackend))]

# ---------------------------------------------------------------- the groups: option names in --help order, and builders

CLIENT = ("model", "base_url", "cache_dir", "cache", "workers", "seed", "temperature", "max_retries", "timeout", "rpm",
          "tpm", "prices", "batch", "batch_dir", "batch_wait", "batch_poll", "batch_max_requests", "batch_max_bytes",
          "min_coverage", "progress")
ANSWER = ("lang", "max_prompt_tokens", "fit", "tokenizer", "chars_per_token", "max_answer_tokens")
GRADING = ("grade_mode", "top_logprobs", "keep_degenerate", "degenerate_patterns", "long_answer_ratio")
ENGINE = ("engine", "ray_address", "ray_workers", "gpus_per_worker", "llm_backend")


def client_config(*, model: str, base_url: str | None, cache_dir: Path | None, cache: CacheMode, workers: int,
                  seed: int, temperature: float, max_retries: int, timeout: float, rpm: int | None, tpm: int | None,
                  prices: Path | None, batch: BatchMode | None, batch_dir: Path | None, batch_wait: float | None,
                  batch_poll: float, batch_max_requests: int, batch_max_bytes: int) -> ClientConfig:
    """The LLM client's settings from the :data:`CLIENT` options (checked again there)."""
    from ragdiag.commands.generate import ClientConfig

    return ClientConfig(model=model, base_url=base_url, cache_dir=cache_dir, cache=cache.value, workers=workers,
                        seed=seed, temperature=temperature, max_retries=max_retries, timeout=timeout, rpm=rpm, tpm=tpm,
                        prices=prices, batch=batch.value if batch is not None else None, batch_dir=batch_dir,
                        batch_wait=batch_wait, batch_poll=batch_poll, batch_max_requests=batch_max_requests,
                        batch_max_bytes=batch_max_bytes)


def answer_settings(lang: PromptLang, max_prompt_tokens: str | None, fit: FitMode, tokenizer: Path | None,
                    chars_per_token: float, max_answer_tokens: int = DEFAULT_MAX_ANSWER_TOKENS) -> AnswerSettings:
    """The answer settings from the :data:`ANSWER` options (checked again there)."""
    from ragdiag.commands.pipeline import AnswerSettings

    return AnswerSettings.from_options(lang.value, max_prompt_tokens, fit.value, tokenizer, chars_per_token,
                                       max_answer_tokens)


def grading_options(grade_mode: GradeMode, top_logprobs: int, keep_degenerate: bool, degenerate_patterns: Path | None,
                    long_answer_ratio: float) -> GradingOptions:
    """How answers are gated and graded, from the :data:`GRADING` options."""
    from ragdiag.commands.pipeline import GradingOptions

    return GradingOptions(grade_mode.value, top_logprobs, degenerate_patterns, long_answer_ratio, keep_degenerate)


def engine_settings(engine: EngineKind, ray_address: str, ray_workers: int, gpus_per_worker: float,
                    llm_backend: LlmBackend) -> EngineSettings:
    """Where embedding and LLM work runs, from the :data:`ENGINE` options (checked again there)."""
    from ragdiag.engine.settings import EngineSettings

    return EngineSettings(engine.value, ray_address, ray_workers, gpus_per_worker, llm_backend.value)


@contextmanager
def llm_run(config: ClientConfig, engine: EngineSettings) -> Iterator[None]:
    """Run an LLM command's body on ``engine``; after it, a run whose replies came from ragdiag's test
    server says so on its last line (stderr)."""
    from ragdiag.report.provenance import marked_replies

    before = marked_replies()
    with engine.activate():
        yield
    _say_if_test_server(config.model, marked_replies() - before)


def _say_if_test_server(model: str, marked: int = 0) -> None:
    from rich.console import Console

    from ragdiag.report.provenance import test_server_line

    line = test_server_line([model], marked)
    if line:
        Console(stderr=True).print(line, style="bold red", highlight=False)
