"""Answers and grades for retrieval contexts, each distinct context asked once.

A context is a query and the ordered ids of the passages shown to the generator. Two operating
points that return the same ordered top-K for a query build the same prompt, so the second one
is a cache hit: its calls are *reused*, not sent (paper 000 §5.3, docs/methods.md#10-answer-sweep). Generation uses
the ``generate`` command's prompt and request (:func:`ragdiag.answers.generation.answer_from_references`), grading its
judge (:func:`ragdiag.answers.judging.make_judge`), so the caches of ``generate``/``grade`` and of
``sweep`` and ``triage`` answer each other.

With dataset reference answers (``sweep --answers``, :mod:`ragdiag.data.reference_answers`) no ideal
answer is generated: each context is graded against every usable reference and keeps the highest
grade (the max over references, as SQuAD's evaluation takes the max over its answer spans).

Answers the user already has (``AnswerJob.given``: ``triage --answers-from``) are graded, never generated.

Without a reference (``AnswerJob.reference_free``: ``triage`` with neither ``--answers`` nor qrels) each
context's answer is graded from its question and passages alone (:mod:`ragdiag.answers.reference_free`).

Call accounting: a counting view of the client records, per item, the calls that reached the server
(``sent``) and those answered by the cache or by an identical request already sent in this run
(``reused``). Before any call, a dry pass over the cache counts the calls a run still needs, so
``max_calls`` can refuse before spending anything.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ragdiag.answers.generation import answer_from_references
from ragdiag.answers.judging import GradingOptions, Judge
from ragdiag.answers.plan import AnswerPlan, answer_in_plan
from ragdiag.answers.reference_free import FreeJudge, make_free_judge
from ragdiag.errors import RagdiagError
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.client import ChatResult
from ragdiag.llm.context_errors import ContextExceeded
from ragdiag.llm.prompts import Prompt, load_prompt
from ragdiag.llm.runner import run_items
from ragdiag.remote.store import request_key

_ASKING_FOR: ContextVar[str | None] = ContextVar("ragdiag_asking_for", default=None)


def asking_for() -> str | None:
    """The id of the query whose ideal answer or context the calling thread is answering or grading
    (inside :func:`answer_all`), else None: how a client proxy attributes a call to its query."""
    return _ASKING_FOR.get()


def for_query(query_id: str) -> contextlib.AbstractContextManager[None]:
    """Calls made inside are attributed to ``query_id`` (:func:`asking_for`): for callers outside :func:`answer_all`."""
    return _for_query(query_id)


@contextmanager
def _for_query(query_id: str) -> Iterator[None]:
    token = _ASKING_FOR.set(query_id)
    try:
        yield
    finally:
        _ASKING_FOR.reset(token)


@dataclass(frozen=True)
class Context:
    """What the generator sees for one query: the passages' ids, in rank order."""

    query_id: str
    doc_ids: tuple[str, ...]


@dataclass
class Answered:
    """The answer and grade of one context and the calls it took."""

    answer: str | None = None
    grade: float | None = None
    sent: int = 0
    reused: int = 0
    error: str | None = None
    lang: str | None = None
    cut: dict[str, Any] | None = None
    reference_grades: list[float | None] | None = None  # --answers: one grade per reference; ``grade`` is their max
    abstained: bool | None = None  # reference-free grading: the judge says the answer abstained


class _WouldSend(Exception):
    """Dry pass: this request is not in the cache."""


class _Tally(threading.local):
    sent = 0
    reused = 0


class CountingClient:
    """The client seen through a per-thread call tally (``dry``: answer from the cache or raise)."""

    def __init__(self, client: ChatClient, dry: bool = False) -> None:
        self._client, self._dry = client, dry
        self._tally = _Tally()
        self._lock = threading.Lock()
        self._sent_keys: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def reset(self) -> None:
        self._tally.sent = self._tally.reused = 0

    def counts(self) -> tuple[int, int]:
        return self._tally.sent, self._tally.reused

    def chat(self, request: dict[str, Any], label: str = "", fresh: bool = False) -> ChatResult:
        key = request_key(request)
        if self._dry:  # a fresh request is always sent: never a reuse
            hit = None if fresh else (self._client.cache.get(key) if self._client.cache is not None else None)
            if hit is None:
                raise _WouldSend()
            self._tally.reused += 1
            return ChatResult(hit["reply"], key, True, hit["prompt_tokens"], hit["completion_tokens"])
        result = self._client.chat(request, label, fresh=fresh)
        with self._lock:
            first = not result.cached and key not in self._sent_keys
            self._sent_keys.add(key)
        if first:
            self._tally.sent += 1
        else:
            self._tally.reused += 1
        return result


@dataclass
class AnswerJob:
    """Texts and ideal passages per query, and the contexts to answer."""

    query_text: dict[str, str]
    doc_text: Callable[[str], str]
    ideal_docs: dict[str, list[str]]
    contexts: list[Context]
    ideal: dict[str, Answered] = field(default_factory=dict)
    answered: dict[Context, Answered] = field(default_factory=dict)
    grading: GradingOptions = field(default_factory=GradingOptions)  # grade mode and reference gate (issue 20)
    ideal_kinds: dict[str, str] = field(default_factory=dict)  # query id → degenerate kind of its ideal answer
    plan: AnswerPlan | None = None  # --lang and the prompt budget (None: English, no budget)
    references: dict[str, list[str]] | None = None  # --answers: dataset reference answers (no ideal is generated)
    usable: dict[str, list[str]] = field(default_factory=dict)  # query id → references the gate let through
    retry_unparsed: bool = False  # a cached judge reply that held no grade is asked again (cache mode rw), as in grade
    given: dict[Context, str] = field(default_factory=dict)  # answers the user already has: graded, never generated
    reference_free: bool = False  # graded without a reference, from the question and the passages

    def free_judge_for(self, client: ChatClient) -> FreeJudge:
        """The reference-free judge, asking again cached replies without a verdict as :meth:`judge_for` does."""
        return make_free_judge(client, retry_unparsed=self.retry_unparsed and client.config.cache == "rw")

    def judge_for(self, client: ChatClient) -> Judge:
        """The judge of this job's grade mode and language, asking again cached replies without a grade
        when ``retry_unparsed`` and the cache is read and written (:func:`ragdiag.answers.judging.make_judge`)."""
        retry = self.retry_unparsed and client.config.cache == "rw"
        return self.grading.judge(client, self.plan.settings.lang if self.plan else "en", retry_unparsed=retry)

    def gate_ideal(self) -> None:
        """Classify the ideal answers (:mod:`ragdiag.data.reference_gate`); degenerate ones go to ``ideal_kinds``."""
        ids = [q for q, a in self.ideal.items() if a.answer is not None]
        kinds = self.grading.gate().classify([self.ideal[q].answer for q in ids], [self.query_text[q] for q in ids])
        self.ideal_kinds = {q: k for q, k in zip(ids, kinds) if k is not None}

    def gate_references(self) -> None:
        """Classify the dataset references (one gate over all of them); a query keeps its usable ones, and
        one with none left gets the kind of its first reference in ``ideal_kinds``."""
        if self.references is None:
            return
        flat = [(q, a) for q, answers in self.references.items() for a in answers]
        kinds = self.grading.gate().classify([a for _, a in flat], [self.query_text[q] for q, _ in flat])
        self.usable = {}
        first_kind: dict[str, str | None] = {}
        for (q, a), kind in zip(flat, kinds):
            first_kind.setdefault(q, kind)
            if kind is None or self.grading.keep_degenerate:
                self.usable.setdefault(q, []).append(a)
        self.ideal_kinds = {q: k for q, k in first_kind.items() if q not in self.usable and k is not None}

    def reference_answers(self, query_id: str) -> list[str]:
        """What a context's answer is graded against: the usable dataset references, else the ideal answer."""
        if self.references is not None:
            return self.usable.get(query_id, [])
        ideal = self.ideal.get(query_id)
        return [] if ideal is None or ideal.answer is None else [ideal.answer]

    def skipped_for(self, query_id: str) -> str | None:
        """Why a context of this query is neither answered nor graded (its ideal answer is degenerate), or None."""
        kind = self.ideal_kinds.get(query_id)
        if kind is None or self.grading.keep_degenerate:
            return None
        return f"degenerate {'reference' if self.references is not None else 'ideal'} answer ({kind})"


class CallsBlock(TypedDict):
    ideal: int
    answers: int
    grades: int
    total: int
    exact: bool


@dataclass(frozen=True)
class CallsNeeded:
    """New calls a run still needs (dry pass over the cache): ideal answers, answers, grades; ``exact`` is
    False when the cache is off or refreshed (every call counted)."""

    ideal: int
    answers: int
    grades: int
    exact: bool

    @property
    def total(self) -> int:
        return self.ideal + self.answers + self.grades

    def block(self) -> CallsBlock:
        """``calls_needed_before_run`` of the sweep meta (key order as written)."""
        return CallsBlock(ideal=self.ideal, answers=self.answers, grades=self.grades, total=self.total,
                          exact=self.exact)


@dataclass(frozen=True)
class ContextAnswer:
    """A context's answer text, the question's language and what the budget cut (None when nothing)."""

    text: str
    lang: str
    cut: dict[str, Any] | None = None


def _generate(client: CountingClient, prompt: Prompt, job: AnswerJob, query_id: str,
              doc_ids: tuple[str, ...] | list[str], label: str) -> str:
    return _generate_in_plan(client, prompt, job, query_id, doc_ids, label).text


def _generate_in_plan(client: CountingClient, prompt: Prompt, job: AnswerJob, query_id: str,
                      doc_ids: tuple[str, ...] | list[str], label: str) -> ContextAnswer:
    """The answer, its language and cut: through the job's plan when it has one, else ``prompt``."""
    passages = [job.doc_text(d) for d in doc_ids]
    if job.plan is None:
        reply = answer_from_references(client, prompt, job.query_text[query_id], passages, label)
        return ContextAnswer(reply.text, "en")
    planned = answer_in_plan(client, job.plan, job.query_text[query_id], passages, label)
    return ContextAnswer(planned.result.text, planned.lang, planned.cut)


def _given_or_generated(client: CountingClient, prompt: Prompt, job: AnswerJob, context: Context) -> ContextAnswer:
    """The context's answer: the one the user gave (``job.given``, no call), else generated."""
    given = job.given.get(context)
    if given is not None:
        query = job.query_text[context.query_id]
        return ContextAnswer(given, job.plan.lang_of(query) if job.plan is not None else "en")
    return _generate_in_plan(client, prompt, job, context.query_id, context.doc_ids, _context_label(context))


def _context_label(context: Context) -> str:
    return f"sweep context q={context.query_id} docs={len(context.doc_ids)}"


def count_needed(client: ChatClient, job: AnswerJob) -> CallsNeeded:
    """Calls the run would send: ideal answers, context answers and grades not yet in the cache.

    Grades of contexts whose answer (or ideal answer) is not cached count 1 each (repairs of
    unparseable judge replies are not foreseeable and not counted).
    """
    per_context = 1 if job.references is None else max((len(a) for a in job.references.values()), default=1)
    upper = {"ideal": 0 if job.references is not None else len(job.ideal_docs), "answers": len(job.contexts),
             "grades": per_context * len(job.contexts)}
    if client.cache is None or client.config.cache == "refresh":
        return CallsNeeded(upper["ideal"], upper["answers"], upper["grades"], exact=False)
    dry = CountingClient(client, dry=True)
    generation = load_prompt("generation")
    judge = job.judge_for(dry)
    need = {"ideal": 0, "answers": 0, "grades": 0}
    if job.reference_free:
        return _count_free(dry, generation, job, need)
    if job.references is not None:
        job.gate_references()
        refs = {q: job.reference_answers(q) for q in job.references}
        degenerate = {q for q in job.references if not refs[q]}
    else:
        ideal: dict[str, str] = {}
        for query_id, docs in job.ideal_docs.items():
            try:
                ideal[query_id] = _generate(dry, generation, job, query_id, docs, f"ideal {query_id}")
            except _WouldSend:
                need["ideal"] += 1
            except ContextExceeded:  # over the prompt budget even without passages: fails before any call
                continue
        gate = job.grading.gate()
        known = list(ideal)
        degenerate = {q for q, k in zip(known, gate.classify([ideal[q] for q in known],
                                                              [job.query_text[q] for q in known]))
                      if k is not None and not job.grading.keep_degenerate}
        refs = {q: [a] for q, a in ideal.items()}
    for context in job.contexts:
        if context.query_id in degenerate:  # neither answered nor graded
            continue
        try:
            answer = _given_or_generated(dry, generation, job, context).text
        except _WouldSend:
            need["answers"] += 1
            need["grades"] += max(1, len(refs.get(context.query_id, [])))
            continue
        except ContextExceeded:
            continue
        if context.query_id not in refs:
            need["grades"] += 1
            continue
        for reference in refs[context.query_id]:
            try:
                judge(({"q": job.query_text[context.query_id], "answer": answer, "id": context.query_id,
                        "E": "sweep", "Nc": len(context.doc_ids), "Np": 0, "K": len(context.doc_ids)}, reference,
                       client.config.model, 0))
            except _WouldSend:
                need["grades"] += 1
    return CallsNeeded(need["ideal"], need["answers"], need["grades"], exact=True)


def _count_free(dry: CountingClient, generation: Prompt, job: AnswerJob, need: dict[str, int]) -> CallsNeeded:
    """:func:`count_needed` for reference-free grading: per context its answer and its one grade, if not cached."""
    free = make_free_judge(dry)
    for context in job.contexts:
        try:
            answer = _given_or_generated(dry, generation, job, context).text
        except _WouldSend:
            need["answers"] += 1
            need["grades"] += 1
            continue
        except ContextExceeded:
            continue
        try:
            free(job.query_text[context.query_id], [job.doc_text(d) for d in context.doc_ids], answer,
                 _context_label(context))
        except _WouldSend:
            need["grades"] += 1
    return CallsNeeded(0, need["answers"], need["grades"], exact=True)


def check_budget(needed: CallsNeeded, max_calls: int | None) -> None:
    """Refuse, before any call, a run that needs more than ``max_calls`` new LLM calls."""
    if max_calls is not None and needed.total > max_calls:
        how = "" if needed.exact else " (cache off or refresh: every call counted)"
        raise RagdiagError(
            f"--max-calls {max_calls}: this run needs {needed.total} new LLM calls{how} "
            f"({needed.ideal} ideal answers, {needed.answers} answers, {needed.grades} grades, repairs "
            f"not counted); nothing was sent. Raise --max-calls to at least {needed.total}, or sweep fewer "
            f"points or queries"
        )


def answer_all(client: ChatClient, job: AnswerJob, progress: bool = True) -> AnswerJob:
    """Ideal answers first (one pool), then every distinct context answered and graded (one pool)."""
    counting = CountingClient(client)
    generation = load_prompt("generation")
    judge = job.judge_for(counting)
    model = client.config.model

    def ask_ideal(query_id: str) -> Answered:
        counting.reset()
        with _for_query(query_id):
            done = _generate_in_plan(counting, generation, job, query_id, job.ideal_docs[query_id], f"ideal {query_id}")
        return Answered(done.text, None, *counting.counts(), lang=done.lang, cut=done.cut)

    free = job.free_judge_for(counting) if job.reference_free else None
    if job.references is None:
        ideal_ids = list(job.ideal_docs)
        outcome = run_items(client, ask_ideal, ideal_ids, [f"ideal {q}" for q in ideal_ids], "ideal answers", progress)
        for query_id, result, error in zip(ideal_ids, outcome.results, outcome.errors):
            job.ideal[query_id] = result if result is not None else Answered(error=error)
        job.gate_ideal()
    else:
        job.gate_references()

    def ask_context(context: Context) -> Answered:
        with _for_query(context.query_id):
            return answer_context(context)

    def answer_context(context: Context) -> Answered:
        counting.reset()
        skipped = job.skipped_for(context.query_id)
        if skipped is not None:
            return Answered(None, None, *counting.counts(), error=skipped)
        done = _given_or_generated(counting, generation, job, context)
        answer = done.text
        if free is not None:
            verdict = free(job.query_text[context.query_id], [job.doc_text(d) for d in context.doc_ids], answer,
                           _context_label(context))
            return Answered(answer, verdict.grade, *counting.counts(), lang=done.lang, cut=done.cut,
                            error=None if verdict.grade is not None else "reference-free judge reply held no verdict",
                            abstained=verdict.abstained)
        references = job.reference_answers(context.query_id)
        if not references:
            return Answered(answer, None, *counting.counts(), error="no ideal answer", lang=done.lang, cut=done.cut)
        row = {"q": job.query_text[context.query_id], "answer": answer, "id": context.query_id, "E": "sweep",
               "Nc": len(context.doc_ids), "Np": 0, "K": len(context.doc_ids), "lang": done.lang}
        grades = [judge((row, reference, model, 0)).grade for reference in references]
        graded = [float(g) for g in grades if g is not None]
        error = None if graded else "judge reply held no grade"
        return Answered(answer, max(graded) if graded else None, *counting.counts(), error=error,
                        lang=done.lang, cut=done.cut,
                        reference_grades=None if job.references is None else [None if g is None else float(g)
                                                                               for g in grades])

    labels = [_context_label(c) for c in job.contexts]
    outcome = run_items(client, ask_context, job.contexts, labels, "answers + grades", progress)
    for context, result, error in zip(job.contexts, outcome.results, outcome.errors):
        job.answered[context] = result if result is not None else Answered(error=error)
    return job
