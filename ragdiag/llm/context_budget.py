"""Fit a generation prompt's references into a token budget (``--max-prompt-tokens``, ``--fit``).

Counting: the model's own tokenizer when known — a local ``tokenizer.json`` read with the
``tokenizers`` library (``--tokenizer``), or ``tiktoken``'s encoding for an OpenAI model name when its
encoding file is available — else an estimate of ⌈characters / c⌉ tokens, c = ``--chars-per-token``
(default 3.0: below the ~4 characters per token of English text under GPT tokenizers, so the estimate
errs towards fewer characters). A prompt's count is the sum over its messages of the content's
tokens + 4 per message + 3 for the reply's priming (the per-message framing of chat templates; OpenAI
cookbook, "How to count tokens with tiktoken").

Fitting, when the full prompt counts more than the budget B:

- ``truncate``: every passage keeps the same share s of its tokens, ⌊tᵢ·s⌋ with
  s = (B − overhead) / Σtᵢ (overhead = the prompt with empty passages); s shrinks by 5 % while the
  re-counted prompt is still over B (token boundaries);
- ``drop``: the lowest-ranked passages are left out, last first, until the prompt fits; if the top
  passage alone does not fit it is truncated as above.

What was cut is returned per item (:class:`Fitted.cut`) for the answers file.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ragdiag.errors import RagdiagError
from ragdiag.llm.context_errors import ContextExceeded

FITS = ("truncate", "drop")
DEFAULT_CHARS_PER_TOKEN = 3.0
MESSAGE_TOKENS, REPLY_TOKENS = 4, 3
ANSWER_RESERVE = 512  # tokens kept for the answer when the budget comes from the model's context length
_SHRINK, _MAX_SHRINKS = 0.95, 60


class TokenCounter(Protocol):
    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def head(self, text: str, tokens: int) -> str: ...


@dataclass
class EstimateCounter:
    """⌈len(text) / chars_per_token⌉ tokens; the head of n tokens is the first ⌊n · c⌋ characters."""

    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN

    @property
    def name(self) -> str:
        return f"estimate: {self.chars_per_token:g} characters per token"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def head(self, text: str, tokens: int) -> str:
        return text[: max(0, math.floor(tokens * self.chars_per_token))]


@dataclass
class TokenizerJsonCounter:
    """The model's ``tokenizer.json`` through ``tokenizers`` (no special tokens; heads cut at token offsets)."""

    path: Path
    _fast: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from tokenizers import Tokenizer

        try:
            self._fast = Tokenizer.from_file(str(self.path))
        except Exception as err:
            raise RagdiagError(f"--tokenizer: cannot load {self.path}: {str(err).splitlines()[0]}") from None
        self._fast.no_truncation()
        self._fast.no_padding()

    @property
    def name(self) -> str:
        return f"tokenizer.json: {self.path}"

    def count(self, text: str) -> int:
        return len(self._fast.encode(text, add_special_tokens=False).ids)

    def head(self, text: str, tokens: int) -> str:
        if tokens <= 0:
            return ""
        offsets = self._fast.encode(text, add_special_tokens=False).offsets
        return text if tokens >= len(offsets) else text[: offsets[tokens - 1][1]]


@dataclass
class TiktokenCounter:
    """An OpenAI model's encoding through ``tiktoken``."""

    encoding: Any

    @property
    def name(self) -> str:
        return f"tiktoken: {self.encoding.name}"

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def head(self, text: str, tokens: int) -> str:
        return self.encoding.decode(self.encoding.encode(text, disallowed_special=())[: max(0, tokens)])


def tiktoken_counter(model: str) -> TiktokenCounter | None:
    """tiktoken's encoding for an OpenAI model name; None when tiktoken is not installed, the model is
    not an OpenAI one, or the encoding file cannot be loaded (it is fetched once, then cached)."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return TiktokenCounter(tiktoken.encoding_for_model(model))
    except Exception:
        return None


def tokenizer_file(path: Path) -> Path:
    """``--tokenizer``: a tokenizer.json, or a model folder holding one."""
    path = Path(path)
    candidate = path / "tokenizer.json" if path.is_dir() else path
    if not candidate.is_file():
        raise RagdiagError(f"--tokenizer: no tokenizer.json at {path} (give the file, or the model folder holding it)")
    return candidate


def load_counter(tokenizer: Path | None, model: str, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> TokenCounter:
    """The model's tokenizer when known (``--tokenizer``, else tiktoken for an OpenAI model), else the estimate."""
    if tokenizer is not None:
        return TokenizerJsonCounter(tokenizer_file(tokenizer))
    return tiktoken_counter(model) or EstimateCounter(chars_per_token)


def prompt_tokens(messages: list[dict[str, str]], counter: TokenCounter) -> int:
    """Σ (content tokens + 4) over messages, + 3 for the reply."""
    return sum(counter.count(m["content"]) + MESSAGE_TOKENS for m in messages) + REPLY_TOKENS


@dataclass
class Fitted:
    """The messages to send, the passages they hold, and what was cut (None when nothing was)."""

    messages: list[dict[str, str]]
    passages: list[str]
    tokens: int
    cut: dict[str, Any] | None


@dataclass
class Budget:
    """A prompt budget in tokens, how to fit it, and the counter."""

    max_prompt_tokens: int
    fit: str
    counter: TokenCounter

    def __post_init__(self) -> None:
        if self.fit not in FITS:
            raise RagdiagError(f"--fit must be one of {', '.join(FITS)}, got '{self.fit}'")
        if self.max_prompt_tokens < 1:
            raise RagdiagError(f"--max-prompt-tokens must be at least 1, got {self.max_prompt_tokens}")

    def fit_passages(self, build: Callable[[list[str]], list[dict[str, str]]], passages: list[str]) -> Fitted:
        """``build(passages)`` → messages, fitted to the budget; :class:`ContextExceeded` (no call sent)
        when even the question and instructions with empty passages do not fit."""
        messages = build(passages)
        before = prompt_tokens(messages, self.counter)
        if before <= self.max_prompt_tokens:
            return Fitted(messages, passages, before, None)
        overhead = prompt_tokens(build([""] * min(len(passages), 1)), self.counter)
        if overhead > self.max_prompt_tokens or not passages:
            raise ContextExceeded(self.max_prompt_tokens, overhead, "counted before sending: the question and "
                                  "instructions alone exceed --max-prompt-tokens")
        kept, dropped = list(passages), []
        if self.fit == "drop":
            while len(kept) > 1 and prompt_tokens(build(kept), self.counter) > self.max_prompt_tokens:
                kept.pop()
                dropped.append(len(kept) + 1)
        cut: dict[str, Any] = {"fit": self.fit, "max_prompt_tokens": self.max_prompt_tokens,
                               "counted_with": self.counter.name, "prompt_tokens_before": before}
        truncated: list[dict[str, int]] = []
        messages = build(kept)
        if prompt_tokens(messages, self.counter) > self.max_prompt_tokens:
            kept, truncated = self._truncate(build, kept)
            messages = build(kept)
        tokens = prompt_tokens(messages, self.counter)
        if tokens > self.max_prompt_tokens:  # even empty passages (their fences) do not fit: nothing is sent
            raise ContextExceeded(self.max_prompt_tokens, tokens, "counted before sending: the question, instructions "
                                  "and passage fences alone exceed --max-prompt-tokens")
        if dropped:
            cut["dropped_ranks"] = sorted(dropped)
        if truncated:
            cut["truncated"] = truncated
        cut["prompt_tokens_after"] = tokens
        return Fitted(messages, kept, tokens, cut)

    def _truncate(self, build: Callable[[list[str]], list[dict[str, str]]],
                  passages: list[str]) -> tuple[list[str], list[dict[str, int]]]:
        sizes = [self.counter.count(p) for p in passages]
        overhead = prompt_tokens(build([""] * len(passages)), self.counter)
        share = max(0.0, (self.max_prompt_tokens - overhead) / max(sum(sizes), 1))
        for _ in range(_MAX_SHRINKS):
            keep = [math.floor(t * min(share, 1.0)) for t in sizes]
            heads = [self.counter.head(p, k) for p, k in zip(passages, keep)]
            if prompt_tokens(build(heads), self.counter) <= self.max_prompt_tokens:
                break
            share *= _SHRINK
        else:
            heads, keep = [""] * len(passages), [0] * len(passages)
        report = [{"rank": i + 1, "tokens": t, "kept_tokens": k} for i, (t, k) in enumerate(zip(sizes, keep)) if k < t]
        return heads, report
