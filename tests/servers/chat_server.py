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
- testset requests (``prompts/testset-question``: a ``<source_passage>``) get a JSON query and answer
  computed from the passage (:func:`testset_reply`), and answerable checks (``prompts/testset-answerable``:
  ``<source_passage>``, ``<query>``, ``<reference_answer>``) a word check (:func:`answerable_reply`);
  ``testset_fault(substring, kind, other=None)`` makes the passages holding ``substring`` get a
  faulty reply: ``copy`` (12 words copied from the passage), ``unanswerable`` (asks about a word the
  passage lacks), ``duplicate`` (the question written for the passage ``other``), ``language`` (the
  question in the other language), ``not-json`` or ``no-question``;
- anything else gets ``"test server reply"``;
- ``words_by_model`` (model name → n): a generation request naming that model gets n words of each
  reference instead of ``words_per_reference`` (two "models" that answer differently, for comparisons
  of two models; still this test server's text);
- ``words_by_system`` (text → n): likewise for a request whose system message contains that text (two
  generation prompts that answer differently; still this test server's text);
- a French prompt (its system message says ``en français``, as the ``*-fr`` prompts do) gets the same
  replies in French: ``"D'après les références : "`` …, and a judge reason in French.

``context_limit(tokens, report=False)``: past ``tokens`` prompt words (the server's "tokens", counted
as in ``usage.prompt_tokens``) a request gets HTTP 400 with OpenAI's ``context_length_exceeded`` body
("This model's maximum context length is N tokens. However, your messages resulted in M tokens…");
``report=True`` also lists ``max_model_len: N`` (vLLM's field) in ``GET /v1/models``. Counter:
``context_rejections``.

Slots: ``slots(n, service_time, publish=True)`` makes a server that works on at most ``n`` requests at
once, each for ``service_time`` seconds (the others queue, and a request whose client gave up is still
worked on, as llama.cpp's server does); ``publish`` serves ``GET /props`` with ``total_slots: n``.

Output limits: a reply longer than the request's ``max_tokens`` / ``max_completion_tokens`` (counted in
words) is cut there and ends with ``finish_reason: "length"``, as a server stops a generation at its
limit; ``honour_limit = False`` makes a server that ignores the limit.

A request with ``logprobs: true`` (``--grade-mode logprobs``) also gets ``choices[0].logprobs.content[0]
.top_logprobs``, deterministic: for a judge reply holding ``overlap o`` the score is s = 1 + 4·o (else
its grade), each digit d in 1..5 gets logprob −(d − s)² / 0.5 − log Z, the token ``"The"`` gets −8,
the list is sorted and cut to ``top_logprobs``, and the content is the most likely digit. Set
``omit_logprobs = True`` to answer such requests without logprobs, as servers without support do.

``judge_noise(sd, seed=0)`` (test-server behaviour, for demos of the judge-noise correction): every judge
reply is shifted by e ~ N(0, sd), drawn by ``random.Random`` seeded with (seed, sha256 of the request
body, how many times this server has seen that body): a digit reply's grade becomes
min(5, max(1, round(g + e))), a logprob reply's score s becomes s + e. Identical requests — the repeats
of ``grade --repeats N``, which differ only in their cache key — thus get different, reproducible
draws, handed out in arrival order (send repeats one at a time, ``--workers 1``, for the same draw per
repeat on every run). ``sd = 0`` (the default) turns it off.

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
import hashlib
import html
import json
import math
import random
import re
import threading
import time
from typing import Any

from ragdiag.io.provenance import TEST_SERVER_MARK
from tests.servers.base import LocalServer

# References: ``[i] text`` (prompt v1) or ``<passage id="i">text</passage>`` (v2, fenced); answers
# may sit inside <ideal_answer> / <candidate_answer> (v2).
_REFERENCE = re.compile(r'^(?:\[(\d+)\]\s+|<passage id="(\d+)">)(.*?)(?:</passage>)?$', re.MULTILINE)
_JUDGE = re.compile(r"Ideal answer:\n(?:<ideal_answer>)?(.*?)(?:</ideal_answer>)?\n\s*\nCandidate answer:\n"
                    r"(?:<candidate_answer>)?(.*?)(?:</candidate_answer>)?\n\s*\n", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")
_JUDGE_FR = re.compile(r"Réponse idéale :\n(?:<ideal_answer>)?(.*?)(?:</ideal_answer>)?\n\s*\nRéponse candidate :\n"
                       r"(?:<candidate_answer>)?(.*?)(?:</candidate_answer>)?\n\s*\n", re.DOTALL)
FRENCH_MARK = "en français"


def is_french(body: dict[str, Any]) -> bool:
    """A French prompt: a message says ``en français`` (the ``*-fr`` prompts ask for answers in French)."""
    return any(FRENCH_MARK in str(m.get("content", "")) for m in body.get("messages", []))


def french_reply(user: str, words_per_reference: int = 12) -> str | None:
    """The French counterparts of :func:`judge_reply` and :func:`generation_reply` (test-server output)."""
    match = _JUDGE_FR.search(user)
    if match:
        ideal = set(_WORD.findall(match.group(1).lower()))
        candidate = set(_WORD.findall(match.group(2).lower()))
        overlap = len(ideal & candidate) / len(ideal) if ideal else 0.0
        return json.dumps({"grade": 1 + round(4 * overlap), "reason": f"recouvrement de mots du serveur de test "
                           f"{overlap:.2f} (pas un jugement de LLM)"}, ensure_ascii=False)
    english = generation_reply(user, words_per_reference)
    return None if english is None else "D'après les références : " + english.removeprefix("From the references: ")
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


_OVERLAP = re.compile(r"overlap (\d+(?:\.\d+)?)")
_FREE_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL)
_FREE_CANDIDATE = re.compile(r"<candidate_answer>(.*?)</candidate_answer>", re.DOTALL)
_ABSTAINS = ("insufficient", "do not know", "don't know")


def reference_free_reply(user: str) -> str | None:
    """Test-server replies to the sufficient-context rater (sufficient when a passage holds at least half the
    question's words; those passages needed) and to the reference-free judge (an abstention 2, else 1 + 4 × the
    share of the answer's words found in the passages); None for other requests. Not an LLM's judgement."""
    question = _FREE_QUESTION.search(user)
    if question is None:
        return None
    asked = set(_WORD.findall(question.group(1).lower()))
    passages = [set(_WORD.findall(text.lower())) for _, _, text in _REFERENCE.findall(user)]
    if "Rate whether these passages are sufficient" in user:
        needed = [i for i, words in enumerate(passages, 1) if asked and len(asked & words) >= len(asked) / 2]
        return json.dumps({"sufficient": bool(needed), "needed": needed,
                           "reason": "test server word overlap with the question (not an LLM's rating)"})
    candidate = _FREE_CANDIDATE.search(user)
    if "Grade the candidate answer without a reference" not in user or candidate is None:
        return None
    answer = candidate.group(1).lower()
    if any(mark in answer for mark in _ABSTAINS):
        return json.dumps({"grade": 2, "abstained": True, "reason": "test server: the answer declines"})
    words = set(_WORD.findall(answer))
    found = set().union(*passages) if passages else set()
    share = len(words & found) / len(words) if words else 0.0
    return json.dumps({"grade": 1 + round(4 * share), "abstained": False,
                       "reason": f"test server word overlap with the passages {share:.2f} (not an LLM judgement)"})


def top_logprobs(text: str, n: int, shift: float = 0.0) -> list[dict[str, Any]]:
    """The deterministic first-token top_logprobs for a reply ``text``, its score moved by ``shift``
    (see the module docstring)."""
    try:
        verdict = json.loads(text)
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("grade"), (int, float)):
        return [{"token": text.split()[0] if text.split() else "test", "logprob": 0.0, "bytes": None}][:n]
    overlap = _OVERLAP.search(str(verdict.get("reason", "")))
    score = (1 + 4 * float(overlap.group(1)) if overlap else float(verdict["grade"])) + shift
    raw = {str(d): -((d - score) ** 2) / 0.5 for d in range(1, 6)}
    log_z = math.log(sum(math.exp(v) for v in raw.values()) + math.exp(-8.0))
    entries = [{"token": t, "logprob": v - log_z, "bytes": None} for t, v in raw.items()]
    entries.append({"token": "The", "logprob": -8.0 - log_z, "bytes": None})
    return sorted(entries, key=lambda e: -e["logprob"])[:n]


def shifted_grade(text: str, shift: float) -> str:
    """A judge reply ``{"grade": g, ...}`` with g moved to min(5, max(1, round(g + shift))); other text as is."""
    try:
        verdict = json.loads(text)
    except ValueError:
        return text
    if shift == 0 or not isinstance(verdict, dict) or not isinstance(verdict.get("grade"), (int, float)):
        return text
    grade = min(5, max(1, round(verdict["grade"] + shift)))
    return json.dumps({**verdict, "grade": grade, "reason": f"{verdict.get('reason', '')}; judge noise {shift:+.2f} "
                       "(test-server knob)"}, ensure_ascii=False)


def logprob_completion(body: dict[str, Any], text: str, shift: float = 0.0) -> dict[str, Any]:
    """A chat.completion whose content is the most likely first token, with its top_logprobs."""
    top = top_logprobs(text, int(body.get("top_logprobs") or 1), shift)
    reply = ChatServer.completion(body, top[0]["token"])
    reply["choices"][0]["logprobs"] = {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"],
                                                    "bytes": None, "top_logprobs": top}]}
    return reply
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


_SOURCE = re.compile(r"<source_passage>(.*?)</source_passage>", re.DOTALL)
_TS_QUERY = re.compile(r"<query>(.*?)</query>", re.DOTALL)
_TS_ANSWER = re.compile(r"<reference_answer>(.*?)</reference_answer>", re.DOTALL)
_LINK = re.compile(r"(?:link|relient) (.*?) ?\?$")
ALIEN_WORD = "quasarwobble"  # in no test corpus: what an unanswerable question asks about


def _long_words(text: str) -> list[str]:
    """The passage's distinct words of at least 7 letters, in order of appearance."""
    return list(dict.fromkeys(w for w in re.findall(r"[^\W\d_]+", text.lower()) if len(w) >= 7))


def testset_question(passage: str, lang: str = "en", alien: bool = False) -> str:
    """The test server's query for a passage: three of its long words (the 1st, 3rd and 5th), one replaced
    by a word the passage lacks when ``alien``."""
    words = (_long_words(passage)[0::2] + ["topic", "data", "result"])[:3]
    if alien:
        words[2] = ALIEN_WORD
    if lang == "fr":
        return f"Quels résultats relient {words[0]}, {words[1]} et {words[2]} ?"
    return f"Which findings link {words[0]}, {words[1]} and {words[2]}?"


def testset_reply(passage: str, french: bool, faults: list[tuple[str, str, str | None]]) -> str:
    """A ``testset-question`` reply (test-server output, never an LLM's): the query of
    :func:`testset_question` and the passage's first 20 words as the answer, or the fault set for it."""
    kind, other = next(((k, o) for sub, k, o in faults if sub in passage), (None, None))
    lang = "fr" if french else "en"
    answer = " ".join(passage.split()[:20])
    if kind == "not-json":
        return "Here is a question about the passage (test server reply, not JSON)"
    if kind == "no-question":
        return json.dumps({"answer": answer})
    if kind == "copy":
        question = " ".join(passage.split()[5:17]) + "?"
    elif kind == "duplicate":
        question = testset_question(other or passage, lang)
    elif kind == "language":
        question = testset_question(passage, "en" if french else "fr")
    else:
        question = testset_question(passage, lang, alien=kind == "unanswerable")
    return json.dumps({"question": question, "answer": answer}, ensure_ascii=False)


def answerable_reply(user: str) -> str | None:
    """A ``testset-answerable`` reply: answerable when every word the query links is in the passage (else,
    for a query without that form, half its words of 4+ letters); supported when 80% of the answer's
    words are. Test-server output, never an LLM judgement."""
    passage, query, answer = _SOURCE.search(user), _TS_QUERY.search(user), _TS_ANSWER.search(user)
    if not passage or not query or not answer:
        return None
    words = set(_WORD.findall(html.unescape(passage.group(1)).lower()))
    asked = html.unescape(query.group(1)).lower().strip()
    link = _LINK.search(asked)
    if link:
        linked = [w for w in re.split(r",\s*|\s+(?:and|et)\s+", link.group(1)) if w]
        answerable = all(w in words for w in linked)
    else:
        content = [w for w in _WORD.findall(asked) if len(w) >= 4]
        answerable = bool(content) and sum(w in words for w in content) >= len(content) / 2
    said = _WORD.findall(html.unescape(answer.group(1)).lower())
    supported = bool(said) and sum(w in words for w in said) >= 0.8 * len(said)
    return json.dumps({"answerable": answerable, "supported": supported,
                       "reason": "test server word check (not an LLM judgement)"})


class ChatServer(LocalServer):
    """``POST /v1/chat/completions`` on 127.0.0.1 with deterministic replies and failure modes."""

    route = "/chat/completions"
    json_kinds = ("no-choices", "content-null", "nan-grade", "inf-grade", "huge-grade")
    _GRADES = {"nan-grade": '{"grade": NaN}', "inf-grade": '{"grade": Infinity}', "huge-grade": '{"grade": 1e400}'}

    def __init__(self, latency: float = 0.0, words_per_reference: int = 12, api_key: str | None = None) -> None:
        super().__init__(latency, api_key)
        self.words_per_reference = words_per_reference
        self.words_by_model: dict[str, int] = {}
        self.words_by_system: dict[str, int] = {}
        self.judge_script: collections.deque[str] = collections.deque()
        self.omit_logprobs = False
        self.honour_limit = True  # False: a server that ignores max_tokens (a reply as long as it likes)
        self._slots: threading.Semaphore | None = None
        self.service_time, self.total_slots = 0.0, None
        self.context_tokens: int | None = None
        self.report_context = False
        self.context_rejections = 0
        self.noise_sd, self.noise_seed = 0.0, 0
        self._seen_bodies: collections.Counter[str] = collections.Counter()
        self.testset_faults: list[tuple[str, str, str | None]] = []

    def testset_fault(self, substring: str, kind: str, other: str | None = None) -> None:
        """Passages holding ``substring`` get the faulty testset reply ``kind`` (see the module docstring)."""
        with self._lock:
            self.testset_faults.append((substring, kind, other))

    def judge_noise(self, sd: float, seed: int = 0) -> None:
        """Shift every judge reply by a seeded N(0, sd) draw (see the module docstring); 0 turns it off."""
        with self._lock:
            self.noise_sd, self.noise_seed = float(sd), int(seed)

    def _noise_shift(self, body: dict[str, Any], text: str) -> float:
        """This reply's draw e ~ N(0, sd): seeded by (seed, body hash, times this body was seen); 0 when off
        or when ``text`` is not a judge verdict."""
        if not self.noise_sd or shifted_grade(text, 1.0) == text:
            return 0.0
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            seen = self._seen_bodies[digest]
            self._seen_bodies[digest] += 1
            sd, seed = self.noise_sd, self.noise_seed
        return random.Random(f"{seed}:{digest}:{seen}").gauss(0.0, sd)

    def slots(self, n: int, service_time: float, publish: bool = True) -> None:
        """Work on at most ``n`` requests at once, ``service_time`` seconds each; ``publish``: ``/props``."""
        self._slots, self.service_time = threading.Semaphore(n), service_time
        self.total_slots = n if publish else None

    def get_route(self, path: str) -> dict[str, Any] | None:
        return {"total_slots": self.total_slots} if path == "/props" and self.total_slots is not None else None

    def context_limit(self, tokens: int | None, report: bool = False) -> None:
        """Answer 400 ``context_length_exceeded`` past ``tokens`` prompt words (None: no limit); ``report``
        also lists the limit as ``max_model_len`` in ``GET /v1/models``."""
        with self._lock:
            self.context_tokens, self.report_context = tokens, report

    def model_entries(self) -> list[dict[str, Any]]:
        entries = super().model_entries()
        if self.report_context and self.context_tokens is not None:
            entries = [{**e, "max_model_len": self.context_tokens} for e in entries]
        return entries

    def script_judge(self, *replies: str) -> None:
        """Use these replies, in order, for the next judge requests."""
        with self._lock:
            self.judge_script.extend(replies)

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        judged = [m["content"] for m in messages if "Ideal answer:" in str(m.get("content", ""))
                  or "Réponse idéale :" in str(m.get("content", ""))]
        user = judged[0] if judged else (messages[-1]["content"] if messages else "")
        with self._lock:
            if judged and self.judge_script:
                return self.judge_script.popleft()
            faults = list(self.testset_faults)
        source = _SOURCE.search(user)
        if source is not None:
            return answerable_reply(user) or testset_reply(html.unescape(source.group(1)), is_french(body), faults)
        words = self.words_by_model.get(str(body.get("model")), self.words_per_reference)
        system = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
        words = next((n for marker, n in self.words_by_system.items() if marker in system), words)
        if is_french(body):
            return french_reply(user, words) or "réponse du serveur de test"
        return (judge_reply(user) or label_reply(user) or reference_free_reply(user)
                or generation_reply(user, words)
                or "test server reply")

    @staticmethod
    def completion(body: dict[str, Any], content: str | None, finish: str = "stop") -> dict[str, Any]:
        """A chat.completion object carrying ``content`` (usage counted in words)."""
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        reply_words = len((content or "").split())
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "system_fingerprint": TEST_SERVER_MARK,  # provenance: ragdiag labels what it computes from these
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": reply_words,
                      "total_tokens": prompt_words + reply_words},
        }

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._slots is not None:
            with self._slots:  # queued until a slot is free, then worked on even if the client has gone
                time.sleep(self.service_time)
        rejected = self._context_rejection(body)
        if rejected is not None:
            return 400, rejected
        text = self._text(body)
        shift = self._noise_shift(body, text)
        if body.get("logprobs") and not self.omit_logprobs:
            return 200, logprob_completion(body, text, shift)
        text, finish = shifted_grade(text, shift), "stop"
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if self.honour_limit and isinstance(limit, int) and len(text.split()) > limit:
            text, finish = " ".join(text.split()[:limit]), "length"  # stopped at the output limit (in words)
        return 200, self.completion(body, text, finish)

    def _context_rejection(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's 400 body for a prompt over :meth:`context_limit`, else None."""
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        with self._lock:
            limit = self.context_tokens
            if limit is None or prompt_words <= limit:
                return None
            self.context_rejections += 1
        message = (f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
                   f"{prompt_words} tokens. Please reduce the length of the messages. (test server)")
        return {"error": {"message": message, "type": "invalid_request_error", "param": "messages",
                          "code": "context_length_exceeded"}}

    def malformed_payload(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        if kind == "no-choices":
            return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model")}
        if kind == "content-null":
            return self.completion(body, None)
        return self.completion(body, self._GRADES[kind])


def main() -> None:
    """``python -m tests.servers.chat_server --port 8000``: the docs' test server, served until interrupted.

    Its replies are this test server's deterministic text and word-overlap grades, never an LLM's."""
    import argparse
    import contextlib

    parser = argparse.ArgumentParser(description="The chat test server of the docs' examples (not an LLM) on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000, the docs' URL)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args()
    if not 0 < args.port < 65536:
        parser.error("--port must be in 1..65535")
    if not (args.latency >= 0 and math.isfinite(args.latency)):
        parser.error("--latency must be a finite number of seconds >= 0")
    server = ChatServer(latency=args.latency)
    server.port = args.port
    with server:
        print(f"ragdiag test server (not an LLM: deterministic test replies) at {server.base_url}; "
              "set OPENAI_API_KEY to any value; Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
