"""A request the model's context cannot hold: recognised in an HTTP 400 body, reported in one line.

Servers say it in their own words; the counts are read where given:

- OpenAI / vLLM: ``This model's maximum context length is 4096 tokens. However, you requested 5210
  tokens (4698 in the messages, 512 in the completion)`` / ``… your messages resulted in 5210 tokens``,
  code ``context_length_exceeded``;
- llama-cpp-python: ``Requested tokens (5210) exceed context window of 4096``;
- llama.cpp's server: type ``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``;
- any 400 saying ``context length exceeded`` / ``exceeds the available context size``.

:class:`ContextExceeded` is a :class:`CallFailed` without an HTTP status: the retry policy passes it
through untouched (never retried unchanged) and the client never caches a failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragdiag.remote.retry import CallFailed, http_status

_LIMIT = (re.compile(r"maximum context length is (\d+)"), re.compile(r"context window of (\d+)"),
          re.compile(r'"n_ctx"\s*:\s*(\d+)'), re.compile(r"context (?:length|size|window) (?:of|is) (\d+)"))
_PROMPT = (re.compile(r"(?:resulted in|requested) (\d+) tokens"), re.compile(r"Requested tokens \((\d+)\)"),
           re.compile(r'"n_prompt_tokens"\s*:\s*(\d+)'), re.compile(r"(\d+) in the messages"))
_SAYS_CONTEXT = re.compile(r"context[_ ]length[_ ]exceeded|maximum context length|exceed(?:s|ed)? (?:the )?"
                           r"(?:available )?context|exceed_context_size|context window", re.IGNORECASE)


PREFIX = "context length exceeded"  # how every ContextExceeded line starts


class ContextExceeded(CallFailed):
    """The prompt does not fit the model's context (counts as given by the server, None if not)."""

    def __init__(self, limit: int | None, prompt_tokens: int | None, source: str = "HTTP 400") -> None:
        self.limit, self.prompt_tokens, self.source = limit, prompt_tokens, source
        super().__init__(self.line())

    def __reduce__(self) -> tuple:
        """Pickled with its counts (a Ray worker's failure comes back to the driver as itself)."""
        return (type(self), (self.limit, self.prompt_tokens, self.source))

    def line(self) -> str:
        asked = f"the prompt has {self.prompt_tokens} tokens" if self.prompt_tokens else "the prompt is too long"
        limit = f", the model's context is {self.limit} tokens" if self.limit else ""
        return (f"{PREFIX}: {asked}{limit} ({self.source}); fit the references with "
                f"--max-prompt-tokens N (or auto) and --fit truncate|drop")


def _first(patterns: tuple[re.Pattern, ...], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def error_text(err: BaseException) -> str:
    """Everything a failed call says: its message and its JSON body (openai ``body``)."""
    body: Any = getattr(err, "body", None)
    response = getattr(err, "response", None)
    raw = ""
    if response is not None:
        try:
            raw = response.text
        except Exception:
            raw = ""
    return " ".join(part for part in (str(err), json.dumps(body, default=str) if body is not None else "", raw) if part)


def context_exceeded(err: BaseException) -> ContextExceeded | None:
    """A :class:`ContextExceeded` when ``err`` is an HTTP 400 (or 413) whose body says the context was exceeded."""
    if http_status(err) not in (400, 413):
        return None
    text = error_text(err)
    if not _SAYS_CONTEXT.search(text):
        return None
    return ContextExceeded(_first(_LIMIT, text), _first(_PROMPT, text), f"HTTP {http_status(err)}")
