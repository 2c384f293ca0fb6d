"""Reference-free grading (``triage`` without ``--answers`` or qrels): an answer judged from its question
and the passages it was given, with no reference answer (prompt ``grading-reference-free``).

Rubric (docs/commands/triage.md#reference-free-grading): 5 answers completely, every claim supported by
the passages; 4 answers, supported, minor omissions; 3 answers in part, supported; 2 abstains (says the
passages are insufficient or it does not know); 1 claims the passages do not support, or off the question.
The reply also says whether the answer abstained.

Strict parsing (:func:`parse_verdict`): a JSON object (optionally in a ```json fence) with an integer
``grade`` 1–5 and a boolean ``abstained``, ``abstained`` true only with grade 2. Anything else is not a
verdict: one repair request follows (the engine's pattern, :func:`ragdiag.answers.judging.make_judge`);
if that fails too the verdict is undecided (grade None), never a default. A cached reply that held no
verdict is asked once more, bypassing the cache, when ``retry_unparsed``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt

PROMPT, REPAIR = "grading-reference-free", "grading-reference-free-repair"
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class FreeVerdict:
    """One reference-free judgement: the grade (None: undecided), whether the answer abstained, the replies."""

    grade: float | None
    abstained: bool | None
    replies: list[str] = field(default_factory=list)


def json_object(reply: str) -> Mapping[str, object] | None:
    """The JSON object of a reply (a ```json fence allowed), else None."""
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def parse_verdict(reply: str) -> tuple[int, bool] | None:
    """(grade, abstained) from a reply, or None when it is not a verdict."""
    data = json_object(reply)
    if data is None:
        return None
    grade, abstained = data.get("grade"), data.get("abstained")
    if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not isinstance(abstained, bool):
        return None
    if not math.isfinite(grade) or grade != int(grade) or not 1 <= grade <= 5:
        return None
    if abstained and grade != 2:
        return None
    return int(grade), abstained


FreeJudge = Callable[[str, list[str], str, str], FreeVerdict]  # (question, passages, answer, label) → verdict


def make_free_judge(client: ChatClient, retry_unparsed: bool = False) -> FreeJudge:
    """``judge(question, passages, answer, label) -> FreeVerdict``: one call, one repair when the reply is not
    a verdict; a cached reply without a verdict is asked again bypassing the cache when ``retry_unparsed``."""
    prompt, repair = load_prompt(PROMPT), load_prompt(REPAIR)

    def ask(question: str, passages: list[str], answer: str, label: str, fresh: bool) -> tuple[FreeVerdict, bool]:
        messages = prompt.messages(query=question, passages=passages, candidate=answer)
        again = {"fresh": True} if fresh else {}
        first = client.chat(client.request(messages, prompt.id, json_reply=True, max_tokens=JUDGE_MAX_TOKENS),
                            label, **again)
        parsed = parse_verdict(first.text)
        if parsed is not None:
            return FreeVerdict(float(parsed[0]), parsed[1], [first.text]), first.cached
        follow_up = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
        second = client.chat(client.request(follow_up, f"{prompt.id}+{repair.id}", json_reply=True,
                                            max_tokens=JUDGE_MAX_TOKENS), label, **again)
        parsed = parse_verdict(second.text)
        verdict = (FreeVerdict(float(parsed[0]), parsed[1], [first.text, second.text]) if parsed is not None
                   else FreeVerdict(None, None, [first.text, second.text]))
        return verdict, first.cached and second.cached

    def judge(question: str, passages: list[str], answer: str, label: str) -> FreeVerdict:
        verdict, cached = ask(question, passages, answer, label, False)
        if verdict.grade is None and cached and retry_unparsed:
            verdict, _ = ask(question, passages, answer, label, True)
        return verdict

    return judge
