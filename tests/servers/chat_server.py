"""A local OpenAI-compatible chat-completions server for tests and benchmarks (127.0.0.1 only).

Its replies are deterministic text computed by this test server — never an LLM's output, and its
"grades" are never an LLM judgement:

- generation requests (a user message with numbered references ``[i] text``) get
  ``"From the references: "`` followed by the first ``words_per_reference`` words of each reference;
- judge requests (``Ideal answer:`` / ``Candidate answer:`` sections) get
  ``{"grade": g, "reason": "test server word overlap ..."}`` with
  g = 1 + round(4 · |ideal words ∩ candidate words| / |ideal words|);
- utility-label requests (``prompts/utility-label``: one ``<query>`` and one ``<passage>`` without an
  id) get ``{"grade": g, "reason": "test server word overlap ... (not an LLM judgement)"}`` with
  o = |query words ∩ passage words| / |query words| and g = 1 + min(4, ⌊5·o⌋), so ``ragdiag label``
  can be tried offline (its grades are this test server's, never an LLM's);
- anything else gets ``"test server reply"``.

Knobs and counters come from :class:`tests.servers.base.LocalServer` (``latency``,
``fail_next(status, times=1, retry_after=None)``, ``fail_always``, ``fail_after``, ``malformed_next``,
``api_key``; ``requests``, ``completed``, ``bodies``, ``statuses``); ``script_judge(*replies)`` sets the
replies used, in order, for the next judge requests. Malformed kinds of this server, besides the raw
ones: ``no-choices``, ``content-null``, ``nan-grade`` / ``inf-grade`` / ``huge-grade`` (a judge reply
``{"grade": NaN}``, ``Infinity``, ``1e400``).

Usage::

    with ChatServer(latency=0.05) as server:
        os.environ["OPENAI_API_KEY"] = "test"
        ... --base-url server.base_url ...
"""

from __future__ import annotations

import collections
import html
import json
import re
from typing import Any

from tests.servers.base import LocalServer

# References: ``[i] text`` (prompt v1) or ``<passage id="i">text</passage>`` (v2, fenced); answers
# may sit inside <ideal_answer> / <candidate_answer> (v2).
_REFERENCE = re.compile(r'^(?:\[(\d+)\]\s+|<passage id="(\d+)">)(.*?)(?:</passage>)?$', re.MULTILINE)
_JUDGE = re.compile(r"Ideal answer:\n(?:<ideal_answer>)?(.*?)(?:</ideal_answer>)?\n\s*\nCandidate answer:\n"
                    r"(?:<candidate_answer>)?(.*?)(?:</candidate_answer>)?\n\s*\n", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")
_LABEL_QUERY = re.compile(r"<query>(.*?)</query>", re.DOTALL)
_LABEL_PASSAGE = re.compile(r"<passage>(.*?)</passage>", re.DOTALL)  # the label prompt's passage has no id


def generation_reply(user: str, words_per_reference: int = 12) -> str | None:
    refs = _REFERENCE.findall(user)
    if not refs:
        return None
    return "From the references: " + " ".join(" ".join(text.split()[:words_per_reference]) for _, _, text in refs)


def judge_reply(user: str) -> str | None:
    match = _JUDGE.search(user)
    if not match:
        return None
    ideal = set(_WORD.findall(match.group(1).lower()))
    candidate = set(_WORD.findall(match.group(2).lower()))
    overlap = len(ideal & candidate) / len(ideal) if ideal else 0.0
    grade = 1 + round(4 * overlap)
    return json.dumps({"grade": grade, "reason": f"test server word overlap {overlap:.2f} (not an LLM judgement)"})


def label_reply(user: str) -> str | None:
    """A utility-label reply: the share of the query's words found in the passage, as a 1–5 grade."""
    query, passage = _LABEL_QUERY.search(user), _LABEL_PASSAGE.search(user)
    if not query or not passage:
        return None
    asked = set(_WORD.findall(html.unescape(query.group(1)).lower()))
    found = set(_WORD.findall(html.unescape(passage.group(1)).lower()))
    overlap = len(asked & found) / len(asked) if asked else 0.0
    grade = 1 + min(4, int(5 * overlap))
    return json.dumps({"grade": grade, "reason": f"test server word overlap {overlap:.2f} (not an LLM judgement)"})


class ChatServer(LocalServer):
    """``POST /v1/chat/completions`` on 127.0.0.1 with deterministic replies and failure modes."""

    route = "/chat/completions"
    json_kinds = ("no-choices", "content-null", "nan-grade", "inf-grade", "huge-grade")
    _GRADES = {"nan-grade": '{"grade": NaN}', "inf-grade": '{"grade": Infinity}', "huge-grade": '{"grade": 1e400}'}

    def __init__(self, latency: float = 0.0, words_per_reference: int = 12, api_key: str | None = None) -> None:
        super().__init__(latency, api_key)
        self.words_per_reference = words_per_reference
        self.judge_script: collections.deque[str] = collections.deque()

    def script_judge(self, *replies: str) -> None:
        """Use these replies, in order, for the next judge requests."""
        with self._lock:
            self.judge_script.extend(replies)

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        judged = [m["content"] for m in messages if "Ideal answer:" in str(m.get("content", ""))]
        user = judged[0] if judged else (messages[-1]["content"] if messages else "")
        with self._lock:
            if judged and self.judge_script:
                return self.judge_script.popleft()
        return (judge_reply(user) or label_reply(user) or generation_reply(user, self.words_per_reference)
                or "test server reply")

    @staticmethod
    def completion(body: dict[str, Any], content: str | None) -> dict[str, Any]:
        """A chat.completion object carrying ``content`` (usage counted in words)."""
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        reply_words = len((content or "").split())
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": reply_words,
                      "total_tokens": prompt_words + reply_words},
        }

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, self.completion(body, self._text(body))

    def malformed_payload(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        if kind == "no-choices":
            return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model")}
        if kind == "content-null":
            return self.completion(body, None)
        return self.completion(body, self._GRADES[kind])
