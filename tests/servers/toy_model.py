"""A deterministic toy "model" behind the chat test server, for sweep and corpus-pipeline tests.

Its behaviour is known exactly, so tests can assert what must hold; its output is computed by this
test server and is never an LLM's answer or judgement.

- **Answer** (any request that is not a judge or label request): the first sentence of each numbered
  reference, in the order given, joined by spaces; a prompt with no reference gets
  ``"The references are insufficient to answer."``.
- **Utility label** (``label``: one ``<query>`` and one id-less ``<passage>``): grade = 1 + min(4, ⌊5·o⌋)
  with o = |query tokens ∩ passage tokens| / |query tokens|, as ``{"grade": g}`` (the chat test
  server's label rule).
- **Listwise ranking** (``label --refine``: one ``<query>`` and numbered passages, a ``ranking``
  reply asked): the passages by that overlap, highest first (ties by number), as ``{"ranking": [...]}``.
- **Judge** (a request with ``Ideal answer`` and ``Candidate answer`` sections): token overlap
  o = |ideal tokens ∩ candidate tokens| / |ideal tokens| (tokens: lower-cased ``[a-z0-9]+``), mapped to
  grade = 1 + min(4, ⌊5·o⌋) — o < 0.2 → 1, < 0.4 → 2, < 0.6 → 3, < 0.8 → 4, ≥ 0.8 → 5 — replied as
  ``{"grade": g, "reason": "toy model token overlap …"}``.

Knobs of the chat test server apply (``context_limit(words, report=False)``: HTTP 400 "context length
exceeded" past that many prompt words; ``--context-limit`` / ``--report-context`` on the command line;
``judge_noise(sd, seed)``: seeded N(0, sd) shifts of judge replies, so repeats disagree —
``--judge-noise`` / ``--noise-seed``; logprob replies as the chat test server's);
a French prompt with no reference gets ``"Les références ne suffisent pas pour répondre."``.

Prompt layouts: the fenced v2 prompts (``<passage id="N">…</passage>``, ``<ideal_answer>``,
``<candidate_answer>``, text HTML-escaped inside) and the v1 prompts (``[i] text`` lines, ``Ideal
answer:`` / ``Candidate answer:`` sections).

Usage::

    with ToyModel(latency=0.05) as toy:
        ... --base-url toy.base_url ...
        toy.generation_requests, toy.judge_requests
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import re
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from tests.servers.chat_server import ChatServer, is_french

_WORD = re.compile(r"[a-z0-9]+")
_PASSAGE = re.compile(r"<passage\b[^>]*>(.*?)</passage>", re.DOTALL)  # generation v2 fences
_V1_REFERENCE = re.compile(r"^\[(\d+)\]\s+(.*)$", re.MULTILINE)  # generation v1: "[i] text" lines
_FENCED = {name: re.compile(rf"<{name}\b[^>]*>(.*?)</{name}>", re.DOTALL) for name in ("ideal_answer", "candidate_answer")}
_V1_JUDGE = re.compile(r"Ideal answer:\n(.*?)\n\s*\nCandidate answer:\n(.*?)\n\s*\n", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
EMPTY_ANSWER = "The references are insufficient to answer."
EMPTY_ANSWER_FR = "Les références ne suffisent pas pour répondre."  # to a French prompt (one saying "en français")


def first_sentence(text: str) -> str:
    """Text up to the first sentence end (., ! or ? followed by space), or all of it."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def references(user: str) -> list[str]:
    """The reference texts of a generation prompt, in order: ``<passage id=N>`` elements (v2,
    entities unescaped), else ``[i] text`` lines (v1)."""
    fenced = _PASSAGE.findall(user)
    if fenced:
        return [html.unescape(text) for text in fenced]
    return [text for _, text in _V1_REFERENCE.findall(user)]


def answer(user: str) -> str:
    refs = [first_sentence(r) for r in references(user) if r.strip()]
    return " ".join(refs) if refs else EMPTY_ANSWER


def answers_to_judge(user: str) -> tuple[str, str] | None:
    """(ideal, candidate) of a judge prompt: ``<ideal_answer>``/``<candidate_answer>`` (v2), else the v1 sections."""
    ideal, candidate = (_FENCED[name].search(user) for name in ("ideal_answer", "candidate_answer"))
    if ideal and candidate:
        return html.unescape(ideal.group(1)), html.unescape(candidate.group(1))
    match = _V1_JUDGE.search(user)
    return (match.group(1), match.group(2)) if match else None


def overlap_grade(ideal: str, candidate: str) -> tuple[int, float]:
    """(grade, overlap) with o = |ideal ∩ candidate| / |ideal| and grade = 1 + min(4, ⌊5·o⌋)."""
    ideal_tokens = set(_WORD.findall(ideal.lower()))
    candidate_tokens = set(_WORD.findall(candidate.lower()))
    overlap = len(ideal_tokens & candidate_tokens) / len(ideal_tokens) if ideal_tokens else 0.0
    return 1 + min(4, int(5 * overlap)), overlap


def judge(user: str) -> str | None:
    pair = answers_to_judge(user)
    if pair is None:
        return None
    grade, overlap = overlap_grade(*pair)
    return json.dumps({"grade": grade, "reason": f"toy model token overlap {overlap:.2f} (test server, not an LLM)"})


_QUERY = re.compile(r"<query>(.*?)</query>", re.DOTALL)
_NUMBERED = re.compile(r'<passage id="(\d+)">(.*?)</passage>', re.DOTALL)
_SINGLE = re.compile(r"<passage>(.*?)</passage>", re.DOTALL)


def query_overlap(query: str, passage: str) -> float:
    """|query tokens ∩ passage tokens| / |query tokens|."""
    wanted = set(_WORD.findall(query.lower()))
    return len(wanted & set(_WORD.findall(passage.lower()))) / len(wanted) if wanted else 0.0


def label_reply(user: str) -> str | None:
    """A utility grade (one passage) or a listwise ranking (numbered passages) for a ``<query>`` prompt."""
    query = _QUERY.search(user)
    if query is None:
        return None
    text = html.unescape(query.group(1))
    numbered = _NUMBERED.findall(user)
    if numbered:
        scored = sorted(numbered, key=lambda item: (-query_overlap(text, html.unescape(item[1])), int(item[0])))
        return json.dumps({"ranking": [int(number) for number, _ in scored]})
    single = _SINGLE.search(user)
    if single is None:
        return None
    overlap = query_overlap(text, html.unescape(single.group(1)))
    return json.dumps({"grade": 1 + min(4, int(5 * overlap)),
                       "reason": f"toy model query overlap {overlap:.2f} (test server, not an LLM)"})


class ToyModel(ChatServer):
    """The chat test server with the toy answer and judge above (failure knobs inherited)."""

    def __init__(self, latency: float = 0.0, api_key: str | None = None, port: int = 0) -> None:
        super().__init__(latency, api_key=api_key)
        self.port = port  # 0: a free port; a fixed port keeps cache keys (which hold the URL) across runs
        self.generation_requests = 0
        self.judge_requests = 0

    def start(self):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
        for text in users:
            verdict = judge(text) or label_reply(text)
            if verdict is not None:
                with self._lock:
                    self.judge_requests += 1
                return verdict
        with self._lock:
            self.generation_requests += 1
        text = answer(users[0] if users else "")
        return EMPTY_ANSWER_FR if text == EMPTY_ANSWER and is_french(body) else text


def main() -> None:
    """``python -m tests.servers.toy_model --port 8765 [--latency 0.05]``: serve until interrupted."""
    import argparse

    parser = argparse.ArgumentParser(description="The toy model test server (not an LLM) on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--context-limit", type=int, default=None,
                        help="answer 400 context_length_exceeded past this many prompt words")
    parser.add_argument("--report-context", action="store_true", help="list --context-limit as max_model_len in /v1/models")
    parser.add_argument("--judge-noise", type=float, default=0.0,
                        help="test-server knob: shift each judge reply by a seeded N(0, SD) draw (repeats disagree)")
    parser.add_argument("--noise-seed", type=int, default=0, help="seed of the --judge-noise draws")
    args = parser.parse_args()
    if not (args.judge_noise >= 0 and math.isfinite(args.judge_noise)):
        parser.error("--judge-noise must be a finite SD >= 0")
    with ToyModel(latency=args.latency, port=args.port) as toy:
        toy.context_limit(args.context_limit, args.report_context)
        toy.judge_noise(args.judge_noise, args.noise_seed)
        noise = f"; judge noise N(0, {args.judge_noise:g}) seed {args.noise_seed}" if args.judge_noise else ""
        print(f"toy model test server (not an LLM) at {toy.base_url}{noise}; Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
