"""A chat server with a fault model, for ``ragdiag triage`` (127.0.0.1 only; test-server output, never an
LLM's answer or judgement).

``FaultServer(model)``: ``model`` maps a question text to its fault knobs (``fixtures/triage-synthetic/
model.json``, written by ``tools/make_triage_synthetic.py``): ``code`` (the right answer), ``trap`` (a
wrong code some passages carry), ``known`` (the model knows the code closed-book), ``cannot`` (the model
fails whenever it gets references), ``first`` (the last reference position at which it still uses the
answer; None: any), ``max_refs`` (the most references it can take; None: any).

A generation request for a known question is answered "The answer is <code>." only when: there are no
references and ``known``; or there are references, not ``cannot``, at most ``max_refs`` of them, a
passage holds the code at a position ≤ ``first``, and no passage holds the trap code (then the answer
repeats the trap). Otherwise: "The references are insufficient." / "I do not know.".

A judge request grades 5 when every code (``ZX\\d+[QT]``) of the ideal answer is in the candidate and the
ideal holds one, else 1. Other requests get :class:`tests.servers.chat_server.ChatServer`'s replies.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from tests.servers.chat_server import _JUDGE, _REFERENCE, ChatServer

_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL)
_CODE = re.compile(r"\bZX\d+[QT]\b")


def load_model(path: Path) -> dict[str, dict[str, Any]]:
    return json.loads(Path(path).read_text())["questions"]


def answer(knobs: dict[str, Any], passages: list[str]) -> str:
    """The fault model's answer for a question with these passages (in order)."""
    right = f"The answer is {knobs['code']}."
    if not passages:
        return right if knobs["known"] else "I do not know."
    if knobs["cannot"] or (knobs["max_refs"] is not None and len(passages) > knobs["max_refs"]):
        return "The references are insufficient."
    if any(knobs["trap"] in p for p in passages):
        return f"The answer is {knobs['trap']}."
    at = next((i for i, p in enumerate(passages, 1) if knobs["code"] in p), None)
    if at is None or (knobs["first"] is not None and at > knobs["first"]):
        return "The references are insufficient."
    return right


def grade(ideal: str, candidate: str) -> int:
    codes = set(_CODE.findall(ideal))
    return 5 if codes and codes <= set(_CODE.findall(candidate)) else 1


class FaultServer(ChatServer):
    """:class:`ChatServer` whose generator and judge follow the fault model (see the module docstring)."""

    def __init__(self, model: dict[str, dict[str, Any]], latency: float = 0.0) -> None:
        super().__init__(latency)
        self.model = model

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        user = str(messages[-1].get("content", "")) if messages else ""
        judged = _JUDGE.search(user)
        if judged:
            g = grade(judged.group(1), judged.group(2))
            return json.dumps({"grade": g, "reason": "test server fault model: codes matched" if g == 5
                               else "test server fault model: codes differ (not an LLM judgement)"})
        question = _QUESTION.search(user)
        knobs = self.model.get(html.unescape(question.group(1)).strip()) if question else None
        if knobs is None:
            return super()._text(body)
        passages = [html.unescape(text) for _, _, text in _REFERENCE.findall(user)]
        return answer(knobs, passages)
