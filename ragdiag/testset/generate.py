"""The LLM side of ``ragdiag testset``: one JSON reply per passage holding a query and its reference
answer (prompt ``testset-question``, French for French passages), and the answerable judgement
(prompt ``testset-answerable``). Replies go through the call cache, so a rerun is free and an
interrupted run resumes; :func:`uncached` counts the calls a phase still has to pay for, before it
sends any."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.prompts import Prompt, load_prompt_lang
from ragdiag.testset.passages import Passage

__all__ = ["QUESTION_PROMPT", "JUDGE_PROMPT", "Candidate", "Example", "judge_requests", "parse_judgement",
           "parse_reply", "question_request", "read_examples", "uncached"]

QUESTION_PROMPT, JUDGE_PROMPT = "testset-question", "testset-answerable"
QUESTION_MAX_TOKENS = 512
JUDGE_TOKENS = 256
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class Example:
    """A few-shot example in the user's own style: a passage, the query written from it, the answer."""

    passage: str
    question: str
    answer: str

    def text(self) -> str:
        return f"Passage: {self.passage}\nQuery: {self.question}\nAnswer: {self.answer}"


@dataclass
class Candidate:
    """A passage and what the model wrote for it; ``problem`` says why its reply was unusable;
    ``flags`` maps each filter that dropped it to the reason."""

    passage: Passage
    reply: str | None
    question: str | None = None
    answer: str | None = None
    problem: str | None = None
    flags: dict[str, str] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.problem is None and not self.flags


def read_examples(path: Path) -> list[Example]:
    """``--examples``: JSON lines ``{"passage": …, "question": …, "answer": …}`` (non-empty strings)."""
    from ragdiag.io.jsonl import read_jsonl_objects

    rows = read_jsonl_objects(path)
    if not rows:
        raise DataError(f"--examples {path}: empty (give at least one example)")
    examples = []
    for number, record in rows:
        values = []
        for name in ("passage", "question", "answer"):
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise DataError(f"--examples {path}: line {number}: field '{name}': missing or not a non-empty string")
            values.append(value.strip())
        examples.append(Example(*values))
    return examples


def question_prompt(lang: str) -> Prompt:
    return load_prompt_lang(QUESTION_PROMPT, lang)


def judge_prompt(lang: str) -> Prompt:
    return load_prompt_lang(JUDGE_PROMPT, lang)


def question_request(client: ChatClient, passage: Passage, examples: Sequence[Example]) -> dict[str, Any]:
    """The request for one passage (its language's prompt, the kind, the fenced examples)."""
    prompt = question_prompt(passage.lang)
    messages = prompt.messages(kind=passage.kind, examples=[e.text() for e in examples], passage=passage.text)
    return client.request(messages, prompt.id, json_reply=True, max_tokens=QUESTION_MAX_TOKENS)


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    try:
        value = json.loads(fenced.group(1) if fenced else stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_reply(text: str) -> tuple[str, str] | str:
    """(question, answer) from a reply ``{"question": …, "answer": …}``, else what is wrong with it."""
    value = _json_object(text)
    if value is None:
        return "reply is not a JSON object"
    question, answer = value.get("question"), value.get("answer")
    if not isinstance(question, str) or not question.strip():
        return "reply names no question"
    if not isinstance(answer, str) or not answer.strip():
        return "reply names no answer"
    return question.strip(), answer.strip()


def judge_requests(client: ChatClient, candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    """The answerable judgement's request for each candidate (question and answer present)."""
    requests = []
    for c in candidates:
        prompt = judge_prompt(c.passage.lang)
        messages = prompt.messages(passage=c.passage.text, query=c.question or "", answer=c.answer or "")
        requests.append(client.request(messages, prompt.id, json_reply=True, max_tokens=JUDGE_TOKENS))
    return requests


def parse_judgement(text: str) -> tuple[bool, bool] | None:
    """(answerable, supported) from ``{"answerable": bool, "supported": bool, …}``, else None."""
    value = _json_object(text)
    if value is None or not isinstance(value.get("answerable"), bool) or not isinstance(value.get("supported"), bool):
        return None
    return value["answerable"], value["supported"]


def uncached(client: ChatClient, requests: Sequence[dict[str, Any]]) -> int:
    """How many of ``requests`` the cache cannot answer (every one with the cache off or refreshed)."""
    from ragdiag.remote.store import request_key

    cache = getattr(client, "cache", None)
    if cache is None or client.config.cache == "refresh":
        return len({request_key(r) for r in requests})
    return len({key for key in (request_key(r) for r in requests) if cache.get(key) is None})
