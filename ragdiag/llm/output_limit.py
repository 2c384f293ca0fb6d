"""Output limits of LLM calls (issue 28 §3): every call carries one, so a looping generation stops
and a paid API cannot bill it without bound.

- Generation: ``--max-answer-tokens`` (default :data:`DEFAULT_ANSWER_TOKENS` = 512, the answer
  reserve the prompt budget keeps, :data:`ragdiag.llm.context_budget.ANSWER_RESERVE`).
- Judges (grade, label, listwise refine) and query rewrites: :data:`JUDGE_MAX_TOKENS`, a small
  fixed budget for a one-line JSON object or one rewritten query.
- The parameter is ``max_completion_tokens`` on OpenAI's own API (which wants it; its reasoning
  models refuse ``max_tokens``) and ``max_tokens`` on every other OpenAI-compatible server
  (llama.cpp, vLLM, Ollama). It is part of the request, hence of the cache key.
- A reply that stopped at the limit (``finish_reason: length``) keeps its text plus one line
  :data:`TRUNCATED_MARK` …, so live and replayed runs see the same text; the reference gate
  flags such an answer as the degenerate kind ``truncated``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ragdiag.data.reference_gate import TRUNCATED_MARK
from ragdiag.errors import RagdiagError
from ragdiag.llm.context_budget import ANSWER_RESERVE

DEFAULT_ANSWER_TOKENS = ANSWER_RESERVE
ANSWER_TOKENS_RANGE = (1, 131_072)
JUDGE_MAX_TOKENS = 256  # {"grade": 4, "reason": "<one sentence>"} or a ranking list: well under 100 tokens


def check_answer_tokens(value: int) -> int:
    """``--max-answer-tokens``: a whole number in :data:`ANSWER_TOKENS_RANGE`."""
    low, high = ANSWER_TOKENS_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RagdiagError(f"--max-answer-tokens must be a whole number between {low} and {high}, got {value!r}")
    return value


def limit_param(provider: str) -> str:
    """The name of the output-limit parameter the endpoint ``provider`` (a base URL) wants."""
    host = (urlsplit(provider).hostname or "").lower()
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def hit_limit(body: dict[str, Any]) -> bool:
    """Whether a chat completion stopped at its output limit (``finish_reason: length``)."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    return first.get("finish_reason") == "length"


def mark_truncated(text: str, params: dict[str, Any]) -> str:
    """``text`` with the line saying it stopped at the limit (named with the parameter sent)."""
    limit = next((f"{name} {params[name]}" for name in ("max_completion_tokens", "max_tokens") if name in params),
                 "no limit sent")
    return f"{text}\n{TRUNCATED_MARK} (finish_reason: length, {limit})]"
