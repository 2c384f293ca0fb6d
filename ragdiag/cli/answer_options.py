"""The options of the commands that generate and grade answers (generate, grade, pipeline, sweep),
declared here once: the question's language and the prompt budget (:mod:`ragdiag.answers.plan`);
``--lang`` also for grade; ``--complete-cases`` for pipeline's correlate stage. :data:`ANSWER` and
:data:`GRADING` are option groups: a command lists ``answer: AnswerSettings = ANSWER`` and receives
the built object (:func:`ragdiag.cli.llm_options.llm_command` expands the group in place)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragdiag.cli import params as p
from ragdiag.cli.params import PATH, TEXT, _float_option, checked_by, choices_metavar

if TYPE_CHECKING:
    from ragdiag.commands.pipeline import AnswerSettings, GradingOptions


class PromptLang(str, Enum):
    auto = "auto"
    en = "en"
    fr = "fr"


class FitMode(str, Enum):
    truncate = "truncate"
    drop = "drop"


AnswerLang = Annotated[PromptLang, typer.Option(
    "--lang", metavar=choices_metavar(PromptLang),
    help="Language of the generation and grading prompts: en, fr, or auto = per question, detected from its "
         "words (French and English function words, French accents); the choice is recorded per row as lang.")]
GradeLang = p.retold(AnswerLang, "Language of the grading prompts: en, fr, or auto = each answers row's lang (written by "
                                  "generate), else detected from the question; recorded per graded row as lang.")
MaxPromptTokens = Annotated[str | None, typer.Option(
    "--max-prompt-tokens", metavar=TEXT, callback=checked_by("ragdiag.answers.plan", "parse_max_prompt_tokens"),
    help="Fit each generation prompt into N tokens (1 to 10000000) by cutting its references (--fit); auto = the "
         "model's context length read from the server's /models (else, for each item the server refuses, the context "
         "length its error states) minus 512 tokens for the answer. Default: no budget (a context error fails its item and names this option).")]
Fit = Annotated[FitMode, typer.Option(
    "--fit", metavar=choices_metavar(FitMode),
    help="With --max-prompt-tokens: truncate = every passage keeps the same share of its tokens; drop = leave out "
         "the lowest-ranked passages first. What was cut is recorded per row (cut).")]
Tokenizer = Annotated[Path | None, typer.Option(
    "--tokenizer", metavar=PATH,
    help="The model's tokenizer.json (or its folder) to count prompt tokens; default: tiktoken for OpenAI model "
         "names when available, else the --chars-per-token estimate.")]
CompleteCases = Annotated[bool, typer.Option(
    "--complete-cases",
    help="Correlate only the queries graded at every K (missing answers are likelier at large K); the verdict says "
         "which rows it used.")]
DEFAULT_MAX_ANSWER_TOKENS = 512  # = ragdiag.llm.context_budget.ANSWER_RESERVE (tests/cli/test_output_limits.py)
MaxAnswerTokens = Annotated[int, p.int_option(
    "--max-answer-tokens", f"Output limit of each generation call, in tokens (sent as max_tokens, or "
    f"max_completion_tokens on OpenAI's API); also the answer reserve of --max-prompt-tokens auto. An answer that hits "
    f"it is kept, marked and flagged as the degenerate kind truncated. Default {DEFAULT_MAX_ANSWER_TOKENS}.",
    1, 131072)]
CharsPerToken = Annotated[float, _float_option(
    "--chars-per-token", "Token estimate when the model's tokenizer is unknown: characters per token.", 0.5, 20.0)]

DEFAULT_LANG, DEFAULT_FIT, DEFAULT_CHARS_PER_TOKEN = PromptLang.auto, FitMode.truncate, 3.0


def answer_settings(lang: PromptLang, max_prompt_tokens: str | None, fit: FitMode, tokenizer: Path | None,
                    chars_per_token: float, max_answer_tokens: int = DEFAULT_MAX_ANSWER_TOKENS) -> AnswerSettings:
    """The library settings from the options (checked again there)."""
    from ragdiag.commands.pipeline import AnswerSettings

    return AnswerSettings.from_options(lang.value, max_prompt_tokens, fit.value, tokenizer, chars_per_token,
                                       max_answer_tokens)


def grading_options(grade_mode: p.GradeMode, top_logprobs: int, keep_degenerate: bool, degenerate_patterns: Path | None,
                    long_answer_ratio: float) -> GradingOptions:
    """How answers are gated and graded, from the options."""
    from ragdiag.commands.pipeline import GradingOptions

    return GradingOptions(grade_mode.value, top_logprobs, degenerate_patterns, long_answer_ratio, keep_degenerate)


@dataclass(frozen=True)
class OptionGroup:
    """Options that travel together: (name, annotation, default) each, in --help order, and the
    function that builds the command's value from them (called with the options as keywords)."""

    options: tuple[tuple[str, Any, Any], ...]
    build: Callable[..., Any]


ANSWER = OptionGroup((("lang", AnswerLang, DEFAULT_LANG), ("max_prompt_tokens", MaxPromptTokens, None),
                      ("fit", Fit, DEFAULT_FIT), ("tokenizer", Tokenizer, None),
                      ("chars_per_token", CharsPerToken, DEFAULT_CHARS_PER_TOKEN),
                      ("max_answer_tokens", MaxAnswerTokens, DEFAULT_MAX_ANSWER_TOKENS)), answer_settings)
GRADING = OptionGroup((("grade_mode", p.GradeModeOpt, p.GradeMode.digit), ("top_logprobs", p.TopLogprobs, p.DEFAULT_TOP_LOGPROBS),
                       ("keep_degenerate", p.KeepDegenerate, False), ("degenerate_patterns", p.DegeneratePatterns, None),
                       ("long_answer_ratio", p.LongAnswerRatio, p.DEFAULT_LONG_ANSWER_RATIO)), grading_options)
