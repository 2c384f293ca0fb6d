"""A chat server with a fault model, for ``ragdiag triage`` (127.0.0.1 only; test-server output, never an
LLM's answer or judgement).

``FaultServer(model)``: ``model`` maps a question text to its fault knobs (``fixtures/triage-synthetic/
model.json``, written by ``tools/make_triage_synthetic.py``): ``code`` (the right answer), ``trap`` (a
wrong code some passages carry), ``known`` (the model knows the code closed-book), ``cannot`` (the model
fails whenever it gets references), ``first`` (the last reference position at which it still uses the
answer; None: any), ``max_refs`` (the most references it can take; None: any); and, for the six types beyond
the tree's first fault model (absent: off), ``reads_last`` (it uses the answer only in the last reference),
``max_chars`` (it fails when the references hold more characters), ``parts`` (the answer is split: every
part must be in the references), ``flaky`` (the chance a right answer is given; else "I do not know."),
``misgrade`` (the judge grades a right answer 1 with this chance).

Randomness (``flaky``, ``misgrade``) is per request: ``random.Random`` seeded with the sha256 of the
request's messages and its ``seed`` parameter, so the same request gets the same reply and a repeat
(``triage --repeats``: another seed) a fresh draw.

A generation request for a known question is answered "The answer is <code>." only when: there are no
references and ``known``; or there are references, not ``cannot``, at most ``max_refs`` of them, a
passage holds the code at a position ≤ ``first`` (the last position with ``reads_last``; every part
with ``parts``), at most ``max_chars`` characters, and no passage holds the trap code (then the answer
repeats the trap); a right answer is then given with chance ``flaky``. Otherwise: "The references are insufficient." / "I do not know.".

Two knobs read only when present (tests build them in memory; the bundled model has neither):
``hallucinates`` — where no passage holds the code, the model makes one up ("The answer is ZX<n>H.")
instead of declining; ``wrong`` — with references, it answers the trap code even when no passage holds it.

A sufficient-context rater request (prompt ``sufficient-context``) is answered from the passages: sufficient
when one holds the code (never the trap), ``needed`` = the passages that hold it. A reference-free judge
request (prompt ``grading-reference-free``) is graded as the generator is right: 5 when the answer holds the
code and a passage holds it, 2 with ``abstained`` when the answer holds no code, else 1.

A judge request grades 5 when every code (``ZX\\d+[QT]``) of the ideal answer is in the candidate and the
ideal holds one (a right answer of a ``misgrade`` question: 1 with that chance), else 1. Other requests get :class:`tests.servers.chat_server.ChatServer`'s replies.
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import re
from pathlib import Path
from typing import Any

from tests.servers.chat_server import _JUDGE, _REFERENCE, ChatServer

_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL)
_CODE = re.compile(r"\bZX\d+[QTH]\b")
_CANDIDATE = re.compile(r"<candidate_answer>(.*?)</candidate_answer>", re.DOTALL)


def load_model(path: Path) -> dict[str, dict[str, Any]]:
    return json.loads(Path(path).read_text())["questions"]


def draw(body: dict[str, Any]) -> float:
    """A uniform draw in [0, 1) fixed by the request's messages and seed (the same request, the same draw)."""
    text = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)
    return random.Random(hashlib.sha256(text.encode()).hexdigest()).random()


def answer(knobs: dict[str, Any], passages: list[str], chance: float = 0.0) -> str:
    """The fault model's answer for a question with these passages (in order); ``chance`` is the request's draw."""
    right = f"The answer is {knobs['code']}."
    if not passages:
        return right if knobs["known"] else "I do not know."
    if knobs.get("wrong"):
        return f"The answer is {knobs['trap']}."
    if knobs.get("hallucinates") and not any(knobs["code"] in p for p in passages):
        return f"The answer is {knobs['code'][:-1]}H."
    if knobs["cannot"] or (knobs["max_refs"] is not None and len(passages) > knobs["max_refs"]):
        return "The references are insufficient."
    if knobs.get("max_chars") is not None and sum(len(p) for p in passages) > knobs["max_chars"]:
        return "The references are insufficient."
    if any(knobs["trap"] in p for p in passages):
        return f"The answer is {knobs['trap']}."
    if knobs.get("parts"):
        if not all(any(part in p for p in passages) for part in knobs["parts"]):
            return "The references are insufficient."
    else:
        at = next((i for i, p in enumerate(passages, 1) if knobs["code"] in p), None)
        last = knobs.get("reads_last") and at != len(passages)
        if at is None or last or (knobs["first"] is not None and at > knobs["first"]):
            return "The references are insufficient."
    if knobs.get("flaky") is not None and chance >= knobs["flaky"]:
        return "I do not know."
    return right


def sufficiency(knobs: dict[str, Any], passages: list[str]) -> dict[str, Any]:
    """The oracle's rating: sufficient when a passage holds the code; the needed passages (1-based)."""
    needed = [i for i, p in enumerate(passages, 1) if knobs["code"] in p]
    return {"sufficient": bool(needed), "needed": needed,
            "reason": "test server fault model: " + ("a passage holds the code" if needed else "no passage holds the code")}


def free_grade(knobs: dict[str, Any], passages: list[str], candidate: str) -> dict[str, Any]:
    """The reference-free verdict consistent with the generator: right and supported 5, abstained 2, else 1."""
    if not _CODE.search(candidate):
        return {"grade": 2, "abstained": True, "reason": "test server fault model: no code given"}
    right = knobs["code"] in candidate and any(knobs["code"] in p for p in passages)
    return {"grade": 5 if right else 1, "abstained": False,
            "reason": "test server fault model: " + ("the code, supported" if right else "a code the context does not support")}


def grade(ideal: str, candidate: str, misgrade: float | None = None, chance: float = 0.0) -> int:
    codes = set(_CODE.findall(ideal))
    right = bool(codes) and codes <= set(_CODE.findall(candidate))
    return 5 if right and not (misgrade is not None and chance < misgrade) else 1


class FaultServer(ChatServer):
    """:class:`ChatServer` whose generator and judge follow the fault model (see the module docstring)."""

    def __init__(self, model: dict[str, dict[str, Any]], latency: float = 0.0) -> None:
        super().__init__(latency)
        self.model = model
        self.by_code = {knobs["code"]: knobs for knobs in model.values()}

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        user = str(messages[-1].get("content", "")) if messages else ""
        free = self._reference_free(user)
        if free is not None:
            return free
        judged = _JUDGE.search(user)
        if judged:
            ideal = judged.group(1)
            knobs = next((self.by_code[c] for c in _CODE.findall(ideal) if c in self.by_code), {})
            g = grade(ideal, judged.group(2), knobs.get("misgrade"), draw(body))
            return json.dumps({"grade": g, "reason": "test server fault model: codes matched" if g == 5
                               else "test server fault model: codes differ (not an LLM judgement)"})
        question = _QUESTION.search(user)
        knobs = self.model.get(html.unescape(question.group(1)).strip()) if question else None
        if knobs is None:
            return super()._text(body)
        passages = [html.unescape(text) for _, _, text in _REFERENCE.findall(user)]
        return answer(knobs, passages, draw(body))

    def _reference_free(self, user: str) -> str | None:
        """The reply to a sufficient-context or reference-free judge request (told by their prompts' closing
        lines), else None."""
        question = _QUESTION.search(user)
        knobs = self.model.get(html.unescape(question.group(1)).strip()) if question else None
        if knobs is None:
            return None
        passages = [html.unescape(text) for _, _, text in _REFERENCE.findall(user)]
        if "Rate whether these passages are sufficient" in user:
            return json.dumps(sufficiency(knobs, passages))
        candidate = _CANDIDATE.search(user)
        if "Grade the candidate answer without a reference" in user and candidate:
            return json.dumps(free_grade(knobs, passages, html.unescape(candidate.group(1))))
        return None
