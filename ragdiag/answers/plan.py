"""How each generation call is built: the question's language picks the prompt, the budget fits the references.

:class:`AnswerSettings` is what the user asked (``--lang``, ``--max-prompt-tokens``, ``--fit``,
``--tokenizer``, ``--chars-per-token``); :class:`AnswerPlan` is it resolved for one run:

- language: ``--lang en|fr`` for every question, or ``auto`` per question
  (:func:`ragdiag.llm.language.detect`); French questions get the ``*-fr`` prompts;
- budget: a number, or ``auto`` = the context length the server reports in ``/models`` minus
  :data:`ANSWER_RESERVE` tokens kept for the answer; when the server reports none, every item is sent
  whole, and an item the server refuses for its length is refit to the context length its error
  states (minus the reserve) and sent once more — changed, never unchanged; items that fit are not
  cut, whatever order the workers run in. Without a budget a context error fails its item, in one line, and the
  run suggests the option.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from ragdiag.errors import RagdiagError
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.client import ChatResult, LLMClient
from ragdiag.llm.context_budget import (
    ANSWER_RESERVE,
    DEFAULT_CHARS_PER_TOKEN,
    FITS,
    Budget,
    Fitted,
    TokenCounter,
    load_counter,
)
from ragdiag.llm.context_errors import ContextExceeded
from ragdiag.llm.language import LANG_CHOICES, LANGS, choose_lang
from ragdiag.llm.output_limit import DEFAULT_ANSWER_TOKENS, check_answer_tokens
from ragdiag.llm.prompts import Prompt, load_prompt_lang


@dataclass(frozen=True)
class AnswerSettings:
    """``--lang``, ``--max-prompt-tokens`` (N, ``auto`` or None), ``--fit``, ``--tokenizer``, ``--chars-per-token``."""

    lang: str = "auto"
    max_prompt_tokens: int | str | None = None
    fit: str = "truncate"
    tokenizer: Path | None = None
    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN
    max_answer_tokens: int = DEFAULT_ANSWER_TOKENS  # output limit of each generation, and the budget's answer reserve

    def __post_init__(self) -> None:
        check_answer_tokens(self.max_answer_tokens)
        if self.lang not in LANG_CHOICES:
            raise RagdiagError(f"--lang must be one of {', '.join(LANG_CHOICES)}, got '{self.lang}'")
        if self.fit not in FITS:
            raise RagdiagError(f"--fit must be one of {', '.join(FITS)}, got '{self.fit}'")
        budget = self.max_prompt_tokens
        if budget is not None and budget != "auto" and not (isinstance(budget, int) and budget >= 1):
            raise RagdiagError(f"--max-prompt-tokens must be a whole number of tokens ≥ 1 or auto, got {budget!r}")
        if not (math.isfinite(self.chars_per_token) and 0.5 <= self.chars_per_token <= 20):
            raise RagdiagError(f"--chars-per-token must be between 0.5 and 20, got {self.chars_per_token}")

    @classmethod
    def from_options(cls, lang: str, max_prompt_tokens: str | None, fit: str, tokenizer: Path | None,
                     chars_per_token: float, max_answer_tokens: int = DEFAULT_ANSWER_TOKENS) -> AnswerSettings:
        """The settings from the command-line values; ``--fit`` other than truncate and ``--tokenizer``
        apply only with ``--max-prompt-tokens``."""
        if max_prompt_tokens is None and (fit != "truncate" or tokenizer is not None):
            flag = "--tokenizer" if tokenizer is not None else "--fit"
            raise RagdiagError(f"{flag} applies only with --max-prompt-tokens")
        return cls(lang=lang, max_prompt_tokens=parse_max_prompt_tokens(max_prompt_tokens), fit=fit,
                   tokenizer=tokenizer, chars_per_token=chars_per_token, max_answer_tokens=max_answer_tokens)

    def prompt_ids(self, name: str = "generation") -> Mapping[str, str]:
        """The prompt versions this setting can use (for the run record)."""
        langs = LANGS if self.lang == "auto" else (self.lang,)
        return {(name if lang == "en" else f"{name}-{lang}"): load_prompt_lang(name, lang).id for lang in langs}


def parse_max_prompt_tokens(text: str | None) -> int | str | None:
    """``--max-prompt-tokens``: a whole number ≥ 1, or ``auto``."""
    if text is None:
        return None
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise RagdiagError(f"--max-prompt-tokens: expected a whole number of tokens or auto, got '{text}'") from None
    if not 1 <= value <= 10_000_000:
        raise RagdiagError(f"--max-prompt-tokens must be between 1 and 10000000, got {value}")
    return value


def budget_from_context(context: int, reserve: int = ANSWER_RESERVE) -> int:
    """The prompt budget for a model context of ``context`` tokens: context − ``reserve`` kept for the
    answer (``--max-answer-tokens``, default 512; half the context when it is under 2 × reserve)."""
    return context - reserve if context > 2 * reserve else max(1, context // 2)


class PromptBudget(TypedDict):
    """``budget`` of the answers meta: the setting, the tokens it resolved to and where from, fit, counter."""

    setting: int | str
    max_prompt_tokens: int | None
    source: str | None
    fit: str
    counted_with: str | None


class PlanMeta(TypedDict, total=False):
    """What determines the generation prompts (the answers meta): language setting, output limit, budget."""

    lang: str
    max_answer_tokens: int
    budget: PromptBudget


@dataclass(frozen=True)
class PlannedAnswer:
    """One generation call's reply, the question's language, the prompt version and what the budget cut."""

    result: ChatResult
    lang: str
    prompt: str
    cut: dict[str, Any] | None = None


@dataclass
class AnswerPlan:
    """Settings resolved for one run; shared by the worker threads."""

    settings: AnswerSettings
    counter: TokenCounter | None = None
    budget_tokens: int | None = None
    budget_source: str | None = None
    notices: list[str] = field(default_factory=list)
    context_errors: list[ContextExceeded] = field(default_factory=list)
    refits: int = 0  # items sent again, refit, after a context error taught the budget (auto)
    _prompts: dict[str, Prompt] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def resolve(cls, settings: AnswerSettings | None, client: LLMClient, name: str = "generation",
                prompt: Prompt | None = None) -> AnswerPlan:
        """Load the prompts (``prompt``: this one for every language) and the counter, and the budget (``auto``:
        read the server's ``/models`` now, before any generation call; refused with ``--cache replay``, which
        never reaches the server)."""
        settings = settings or AnswerSettings()
        plan = cls(settings)
        plan._prompts = {lang: prompt or load_prompt_lang(name, lang) for lang in LANGS}
        if settings.max_prompt_tokens is None:
            return plan
        plan.counter = load_counter(settings.tokenizer, client.config.model, settings.chars_per_token)
        if settings.max_prompt_tokens != "auto":
            plan.budget_tokens, plan.budget_source = int(settings.max_prompt_tokens), "--max-prompt-tokens"
        else:
            plan._read_server_context(client)
        return plan

    def _read_server_context(self, client: LLMClient) -> None:
        from ragdiag.llm.client import KEY_ENV, OPENAI_URL
        from ragdiag.llm.server_context import read_context_length

        config = client.config
        if config.cache == "replay":
            raise RagdiagError("--max-prompt-tokens auto reads the model's context length from the server, which "
                               "--cache replay never reaches: give the number (the earlier run's answers meta "
                               "records it as budget.max_prompt_tokens)")
        context = read_context_length(config.base_url or OPENAI_URL, os.environ.get(KEY_ENV) or "none", config.model,
                                      config.timeout)
        if context is None:
            self.notices.append(f"--max-prompt-tokens auto: the server does not report {config.model}'s context "
                                "length in /models; items are sent whole, and one refused for its length is refit "
                                "to the context its error states and sent once more")
            return
        self.budget_tokens = budget_from_context(context, self.settings.max_answer_tokens)
        self.budget_source = (f"server /models: context {context} tokens − {self.settings.max_answer_tokens} kept "
                              "for the answer")
        self.notices.append(f"--max-prompt-tokens auto: the server reports a {context}-token context for "
                            f"{config.model}; prompt budget {self.budget_tokens} tokens")

    def lang_of(self, query: str) -> str:
        return choose_lang(self.settings.lang, query)

    def prompt(self, lang: str) -> Prompt:
        return self._prompts[lang]

    def _budget(self, tokens: int | None = None) -> Budget | None:
        tokens = self.budget_tokens if tokens is None else tokens
        return None if tokens is None or self.counter is None else Budget(tokens, self.settings.fit, self.counter)

    def fit(self, prompt: Prompt, query: str, passages: list[str], tokens: int | None = None) -> Fitted:
        """The messages for ``query`` and ``passages``, fitted to ``tokens`` (default: the run's budget,
        if any)."""
        def build(ps: list[str]) -> list[dict[str, str]]:
            return prompt.messages(query=query, references=ps)

        budget = self._budget(tokens)
        if budget is None:
            return Fitted(build(passages), passages, 0, None)
        return budget.fit_passages(build, passages)

    def item_budget(self, err: ContextExceeded) -> int | None:
        """With ``auto`` and no context length from ``/models``: the budget for an item the server
        refused, from the context length its error states (each such item is refit on its own, so the
        outcome does not depend on which item failed first); None when there is nothing to learn."""
        if self.settings.max_prompt_tokens != "auto" or self.budget_tokens is not None or err.limit is None \
                or self.counter is None:
            return None
        tokens = budget_from_context(err.limit, self.settings.max_answer_tokens)
        with self._lock:
            if self.budget_source is None:
                self.budget_source = (f"learned per refused item from its context-length error: context {err.limit} "
                                      f"tokens − {self.settings.max_answer_tokens} kept for the answer")
                self.notices.append(f"--max-prompt-tokens auto: the server's error says the context is {err.limit} "
                                    f"tokens; each refused item is refit to {tokens} tokens and sent once more")
        return tokens

    def record_context_error(self, err: ContextExceeded) -> None:
        with self._lock:
            self.context_errors.append(err)

    def suggestion(self) -> str | None:
        """One line when calls failed for the context: how many, the server's counts, the option to use."""
        if not self.context_errors:
            return None
        limits = sorted({e.limit for e in self.context_errors if e.limit})
        prompts = [e.prompt_tokens for e in self.context_errors if e.prompt_tokens]
        counts = f"; largest prompt {max(prompts)} tokens" if prompts else ""
        if limits:
            advice = f"--max-prompt-tokens {budget_from_context(limits[0])} (or auto)"
            counts = f" (model context {limits[0]} tokens{counts})"
        else:
            advice = "--max-prompt-tokens N (or auto)"
            counts = f" ({counts[2:]})" if counts else ""
        return (f"{len(self.context_errors)} call(s) exceeded the model's context{counts}: rerun with {advice} "
                f"--fit truncate|drop to fit the references")

    def as_meta(self) -> PlanMeta:
        """What determines the prompts: language setting, budget, fit and counter (for the answers meta)."""
        meta = PlanMeta(lang=self.settings.lang, max_answer_tokens=self.settings.max_answer_tokens)
        if self.settings.max_prompt_tokens is not None:
            meta["budget"] = PromptBudget(setting=self.settings.max_prompt_tokens, max_prompt_tokens=self.budget_tokens,
                                          source=self.budget_source, fit=self.settings.fit,
                                          counted_with=self.counter.name if self.counter else None)
        return meta


def answer_in_plan(client: ChatClient, plan: AnswerPlan, query: str, passages: list[str], label: str,
                   lang: str | None = None) -> PlannedAnswer:
    """One generation call in the question's language within the budget: the reply, ``lang``, ``prompt``
    and, when the budget cut something, ``cut``.

    A context-length error is recorded; with ``auto`` and no context length from ``/models``, the item
    is refit to the context length its error states and sent once more (:meth:`AnswerPlan.item_budget`).
    """
    lang = lang or plan.lang_of(query)
    prompt = plan.prompt(lang)
    fitted = plan.fit(prompt, query, passages)
    try:
        result = client.chat(client.request(fitted.messages, prompt.id, max_tokens=plan.settings.max_answer_tokens),
                             label)
    except ContextExceeded as err:
        tokens = plan.item_budget(err)
        if tokens is None:
            plan.record_context_error(err)
            raise
        first = fitted.messages
        fitted = plan.fit(prompt, query, passages, tokens)
        if fitted.messages == first:  # the budget cuts nothing here: never resend it unchanged
            plan.record_context_error(err)
            raise
        with plan._lock:
            plan.refits += 1
        try:
            result = client.chat(client.request(fitted.messages, prompt.id,
                                                max_tokens=plan.settings.max_answer_tokens), label)
        except ContextExceeded as again:
            plan.record_context_error(again)
            raise
    return PlannedAnswer(result, lang, prompt.id, fitted.cut)
