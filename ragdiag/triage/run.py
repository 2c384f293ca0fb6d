"""Run ``ragdiag triage``: the baseline, then the interventions smallest first.

Every context (a query and the ordered passages shown to the generator) is answered and graded by
:func:`ragdiag.answers.contexts.answer_all` — the ``generate`` prompt (fenced passages), the ``grade``
judge, the reference gate, the shared runner (workers, ``--batch``) and the call cache — so a rerun
pays nothing twice and an interrupted run resumes. Steps:

1. cost up front: per query, the new calls its baseline and every intervention that applies would
   need (a dry pass over the cache, :func:`ragdiag.answers.contexts.count_needed`); ``--max-calls``
   below the cheapest query's cost is refused before any call;
2. queries go in waves whose worst-case cost fits what is left of ``--max-calls`` (a hard cap;
   queries that do not fit are listed as left out);
3. per wave: the baseline (top K; ``--repeats N``: N times for a failing query), then the failing
   queries (grade < ``--fail-below``; ``--all``: all) through their interventions smallest first
   (:func:`ragdiag.triage.smallest.next_asks`: one size at a time, the further repeats of a variant only
   once it fixed on repeat 0), then the judge consistency check where nothing fixed the query
   (:mod:`ragdiag.triage.repeats`); a query leaves once :func:`ragdiag.triage.tree.decide` knows its
   cause (``--exhaustive``: every intervention at once);
4. ``single-passage`` (opt-in) for every triaged query: the utility labels (eRAG).
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any

from ragdiag.answers.contexts import Answered, AnswerJob, Context, answer_all, asking_for, count_needed
from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerPlan, AnswerSettings
from ragdiag.errors import RagdiagError
from ragdiag.io.progress import note
from ragdiag.llm.batch import Deferred
from ragdiag.llm.client import ChatResult, LLMClient
from ragdiag.remote.store import request_key
from ragdiag.triage.inputs import TriageData, TriageQuery
from ragdiag.triage.interventions import BASELINE, variants
from ragdiag.triage.repeats import REFERENCE, RepeatClient, consistent, flaky_baseline, regrade_repeats
from ragdiag.triage.smallest import next_asks, size, wanted
from ragdiag.triage.sufficiency import FreeRun, Sufficiency, worst_case_extra
from ragdiag.triage.tree import Evidence, decide, needs_judge_check

ORACLE_NOTE = ("oracle skipped: without --answers the oracle prompt is the ideal answer's own prompt, so it always "
               "agrees with itself; the cause that needs it (generator) is not tested: needs --answers; a retrieval "
               "miss rests on the qrels alone (no relevant passage in the pool)")
PASSED = "passed"  # --all: a query whose baseline is right has no failure to explain
FREE_NOTE = ("reference-free: neither reference answers nor qrels, so every answer is graded without a reference "
             "(answers the question, supported by its passages, abstains when they are insufficient) and the causes "
             "rest on the sufficient-context rater; oracle and closed-book need a reference and are skipped")


@dataclass
class TriageConfig:
    k: int = 5
    fail_below: float = 3.0
    all_queries: bool = False
    interventions: tuple[str, ...] = ()
    exhaustive: bool = False
    ks: tuple[int, ...] = ()
    ideal_cap: int = 10
    max_calls: int | None = None
    repeats: int = 1  # --repeats: generations and gradings per variant; a fix holds on all of them
    grading: GradingOptions = field(default_factory=GradingOptions)
    answer: AnswerSettings | None = None
    reference_free: bool = False  # graded without a reference; causes from the sufficient-context rater
    pool_k: int | None = None  # the rater's deeper pool (None: the whole candidate pool)


@dataclass
class QueryState:
    """One query through the run: its planned variants, their answers, its calls and its verdict."""

    query: TriageQuery
    planned: dict[str, tuple[str, ...]]
    evidence: Evidence
    answered: dict[str, Answered] = field(default_factory=dict)
    calls: int = 0
    reused: int = 0
    worst: int = 0
    triaged: bool = False
    passed: bool = False  # --all: the baseline is right (cause "passed", left out of the cause shares)
    cause: str | None = None
    also: list[str] = field(default_factory=list)
    left_out: str | None = None
    sufficiency: Sufficiency = field(default_factory=Sufficiency)  # reference-free: the rater's verdicts
    repeat_answers: dict[str, list[str | None]] = field(default_factory=dict)  # label → answers of repeats 1..N-1
    judge_check: dict[str, list[float | None]] = field(default_factory=dict)  # "answer"/"reference" → grades

    @property
    def decided(self) -> bool:
        return self.cause is not None


class PaidClient:
    """The run's client, keeping which request keys this run paid for, and for which query.

    A key is paid once: when the server answers it (not the cache), or when a ``--batch`` round answers
    a request this run deferred (its item then finds the reply in the cache). The query is the one the
    engine is answering when the call is made (:func:`ragdiag.answers.contexts.asking_for`), never read
    back from a display label; per-item tallies would lose the calls of an item that a batch round runs
    again.
    """

    def __init__(self, client: LLMClient) -> None:
        self._client, self._lock = client, threading.Lock()
        self._deferred: set[str] = set()
        self.paid: dict[str, str | None] = {}  # request key → query id, in the order paid

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def chat(self, request: dict[str, Any], label: str = "", fresh: bool = False) -> ChatResult:
        key = request_key(request)
        try:
            result = self._client.chat(request, label, fresh=fresh)
        except Deferred:
            with self._lock:
                self._deferred.add(key)
            raise
        with self._lock:
            if key not in self.paid and (not result.cached or key in self._deferred):
                self.paid[key] = asking_for()
                return dataclasses.replace(result, cached=False)
        return result

    def calls_of(self) -> dict[str | None, int]:
        """Paid calls per query id."""
        counts: dict[str | None, int] = {}
        for query in self.paid.values():
            counts[query] = counts.get(query, 0) + 1
        return counts


def plan_query(query: TriageQuery, cfg: TriageConfig, oracle_ok: bool) -> dict[str, tuple[str, ...]]:
    """Every context the run may ask for this query: label → passage ids (enabled and applicable)."""
    planned = dict(variants(query, BASELINE, cfg.k, cfg.ks, cfg.ideal_cap))
    for name in cfg.interventions:
        if name == "oracle" and not oracle_ok:
            continue
        planned.update(variants(query, name, cfg.k, cfg.ks, cfg.ideal_cap))
    return planned


class Triage:
    """The run's state: data, options, references, the client and one :class:`QueryState` per query."""

    def __init__(self, data: TriageData, cfg: TriageConfig, references: dict[str, list[str]] | None,
                 client: LLMClient, progress: bool = True, given: dict[str, str] | None = None) -> None:
        self.data, self.cfg, self.references, self.progress = data, cfg, references, progress
        self.given = given or {}  # --answers-from: query id → the baseline answer the user already has
        self.client = PaidClient(client)
        self.plan: AnswerPlan | None = None
        self.notes: list[str] = []
        oracle_ok = references is not None
        if cfg.reference_free:
            self.notes.append(FREE_NOTE)
            note(FREE_NOTE)
        elif "oracle" in cfg.interventions and not oracle_ok:
            self.notes.append(ORACLE_NOTE)
            note(ORACLE_NOTE)
        self.states = []
        self.by_id = {q.id: q for q in data.queries}
        for q in data.queries:
            planned = plan_query(q, cfg, oracle_ok)
            if references is None and not q.relevant:  # no ideal answer can be generated: nothing to grade
                planned = {}
            if cfg.reference_free:  # the interventions wait for the rater (ragdiag.triage.sufficiency)
                planned = {lb: ids for name in (BASELINE, "single-passage") if name == BASELINE or name in cfg.interventions
                           for lb, ids in variants(q, name, cfg.k, cfg.ks, cfg.ideal_cap).items()}
            ev = Evidence(False, bool(q.relevant), q.first_relevant_rank() is not None, cfg.k, cfg.fail_below,
                          {lb for lb in planned if lb != BASELINE and not lb.startswith("single:")},
                          sizes={lb: size(ids, planned[BASELINE]) for lb, ids in planned.items() if BASELINE in planned},
                          repeats=cfg.repeats)
            self.states.append(QueryState(q, planned, ev))
        self._baseline = {s.query.id: s.planned[BASELINE] for s in self.states if BASELINE in s.planned}
        self._ideal: dict[str, str] = {}  # without --answers: the ideal answers, for the judge check

    def job(self, contexts: list[tuple[QueryState, str]], graded: dict[Context, str] | None = None) -> AnswerJob:
        """An :class:`AnswerJob` for these (query, label) contexts, each distinct context once; with ``graded``,
        those contexts with their answers given (graded, never generated: the judge check)."""
        queries = {s.query.id: s.query for s, _ in contexts}
        unique = list(dict.fromkeys(Context(s.query.id, s.planned[lb]) for s, lb in contexts))
        given = {Context(q, self._baseline[q]): a for q, a in self.given.items()
                 if q in queries and self._baseline.get(q)}
        if graded is not None:
            queries = {c.query_id: self.by_id[c.query_id] for c in graded}
            unique, given = list(graded), graded
        job = AnswerJob({q: t.text for q, t in queries.items()}, self.data.doc_text.__getitem__,
                        {} if self.references is not None or self.cfg.reference_free else {q: t.relevant[: self.cfg.ideal_cap]
                                                                for q, t in queries.items() if t.relevant},
                        unique, grading=self.cfg.grading,
                        references=None if self.references is None else {q: self.references[q] for q in queries},
                        retry_unparsed=True, given=given, reference_free=self.cfg.reference_free)
        job.plan = self.plan
        return job

    def worst_case(self) -> dict[str, Any]:
        """Per query, the new calls of its baseline and every planned intervention (dry pass over the cache)."""
        n_refs = {q: len(r) for q, r in (self.references or {}).items()}
        for state in self.states:
            labels = list(state.planned)
            contexts = [(state, lb) for lb in labels]
            state.worst = sum(count_needed(RepeatClient(self.client, r), self.job(contexts)).total
                              for r in range(self.cfg.repeats)) if labels else 0
            if self.cfg.reference_free and labels:
                state.worst += worst_case_extra(self, state)
            elif labels and state.query.relevant:  # the judge check: re-grades of the answer and the references
                state.worst += len(regrade_repeats(self.cfg.repeats)) + self.cfg.repeats * n_refs.get(state.query.id, 1)
        paying = [s.worst for s in self.states if s.worst > 0]
        return {"worst_case_calls": sum(s.worst for s in self.states), "cheapest_query": min(paying, default=0),
                "dearest_query": max(paying, default=0), "exact": self.client.cache is not None}

    def announce(self, cost: dict[str, Any]) -> None:
        """The cost on stderr before any call (single-passage: K answers and K grades per triaged query)."""
        single = (f"; single-passage adds up to {2 * self.cfg.k} calls per triaged query (K answers, K grades)"
                  if "single-passage" in self.cfg.interventions else "")
        cap = "" if self.cfg.max_calls is None else f"; --max-calls {self.cfg.max_calls} is a hard cap"
        n = self.cfg.repeats
        again = (f"; --repeats {n}: the baseline of every failing query is asked {n} times ({2 * (n - 1)} more calls "
                 f"each) and every intervention that fixes on the first repeat {n - 1} more times (2 calls each)"
                 if n > 1 else "")
        note(f"cost before any call: at most {cost['worst_case_calls']} new LLM calls if every query fails and every "
             f"intervention runs (one query: {cost['cheapest_query']}–{cost['dearest_query']}); the tree stops once "
             f"a cause is known{single}{again}{cap}")

    def check_budget(self, cost: dict[str, Any]) -> None:
        """``--max-calls`` below the cost of one query: refused before any call."""
        cap = self.cfg.max_calls
        if cap is not None and cost["cheapest_query"] > cap:
            raise RagdiagError(f"--max-calls {cap} is below the cost of one query (at least {cost['cheapest_query']} "
                               f"new calls: baseline and interventions); nothing was sent. Raise --max-calls")

    def run(self) -> None:
        """Waves of queries whose worst case fits the budget left; each through baseline and interventions."""
        pending = list(self.states)
        while pending:
            left = None if self.cfg.max_calls is None else self.cfg.max_calls - self.paid()
            wave, reserved = [], 0
            for state in pending:
                if left is not None and reserved + state.worst > left:
                    break
                wave.append(state)
                reserved += state.worst
            if not wave:
                break
            self._wave(wave)
            pending = pending[len(wave):]
        for state in pending:
            state.left_out = f"--max-calls {self.cfg.max_calls}: its worst case ({state.worst} calls) did not fit"

    def paid(self) -> int:
        return len(self.client.paid)

    def _client(self, repeat: int) -> Any:
        return self.client if repeat == 0 else RepeatClient(self.client, repeat)

    def _ask(self, contexts: list[tuple[QueryState, str]], repeat: int = 0) -> None:
        """Answer and grade these contexts (as repeat ``repeat``); store each label's result and the calls."""
        if not contexts:
            return
        job = answer_all(self._client(repeat), self.job(contexts), self.progress)
        self._ideal.update({q: a.answer for q, a in job.ideal.items() if a.answer is not None})
        counted: set[Context] = set()
        for state, label in contexts:
            context = Context(state.query.id, state.planned[label])
            answered = job.answered[context]
            if repeat:
                state.evidence.repeat_grades.setdefault(label, []).append(answered.grade)
                state.repeat_answers.setdefault(label, []).append(answered.answer)
            else:
                state.answered[label] = answered
                if not label.startswith("single:"):
                    state.evidence.grades[label] = answered.grade
            if context not in counted:
                counted.add(context)
                state.reused += answered.reused
            if label == BASELINE and not repeat:
                state.evidence.degenerate = state.query.id in job.ideal_kinds
        self._count([s for s, _ in contexts])

    def _count(self, states: list[QueryState]) -> None:
        paid = self.client.calls_of()
        for state in {id(s): s for s in states}.values():
            state.calls = paid.get(state.query.id, 0)

    def _references(self, state: QueryState) -> list[str]:
        if self.references is not None:
            return self.references.get(state.query.id, [])
        ideal = self._ideal.get(state.query.id)
        return [ideal] if ideal is not None else []

    def _judge_check(self, states: list[QueryState]) -> None:
        """The failing answer re-graded and each reference graded as the candidate (:mod:`ragdiag.triage.repeats`)."""
        if not states:
            return
        answer = {s.query.id: s.answered[BASELINE].answer for s in states}
        regrades: dict[str, list[float | None]] = {s.query.id: [] for s in states}
        for r in regrade_repeats(self.cfg.repeats):
            graded = {Context(q, self._baseline[q]): a for q, a in answer.items() if a is not None}
            job = answer_all(self._client(r), self.job([], graded), self.progress)
            for context, done in job.answered.items():
                regrades[context.query_id].append(done.grade)
        refs: dict[str, list[float | None]] = {s.query.id: [] for s in states}
        own = {Context(s.query.id, (REFERENCE, str(i))): text for s in states for i, text in enumerate(self._references(s))}
        for r in range(self.cfg.repeats):
            if own:
                job = answer_all(self._client(r), self.job([], own), self.progress)
                for context, done in job.answered.items():
                    refs[context.query_id].append(done.grade)
        for state in states:
            q = state.query.id
            state.judge_check = {"answer": regrades[q], "reference": refs[q]}
            state.evidence.judge = consistent(state.evidence.grades.get(BASELINE), regrades[q], refs[q],
                                              self.cfg.fail_below)
        self._count(states)

    def _wave(self, wave: list[QueryState]) -> None:
        if self.cfg.reference_free:
            FreeRun(self).wave(wave)
            return
        self._ask([(s, BASELINE) for s in wave if BASELINE in s.planned])
        for state in wave:
            grade = state.evidence.grades.get(BASELINE)
            ungradable = not state.planned  # a qrels gap without --answers: no ideal answer
            baseline = state.answered.get(BASELINE)
            error = baseline.error if baseline is not None else None
            if state.evidence.degenerate or ungradable:
                state.triaged = True
            elif grade is None:
                state.left_out = f"baseline not graded: {error}"
            else:
                state.triaged = self.cfg.all_queries or grade < self.cfg.fail_below
                state.passed = grade >= self.cfg.fail_below  # --all: evidence for base rates, no cause to find
        triaged = [s for s in wave if s.triaged]
        self._decide(triaged)  # the gate and the qrels decide some queries without another call
        failing = [s for s in triaged if not s.decided and not s.passed and BASELINE in s.planned]
        for r in range(1, self.cfg.repeats):
            self._ask([(s, BASELINE) for s in failing], r)
        for state in failing if self.cfg.repeats > 1 else []:
            ev = state.evidence
            state.evidence.flaky = flaky_baseline([ev.grades.get(BASELINE), *ev.repeat_grades.get(BASELINE, [])],
                                                  [state.answered[BASELINE].answer,
                                                   *state.repeat_answers.get(BASELINE, [])], self.cfg.fail_below)
        self._decide(triaged)
        while True:
            first: list[tuple[QueryState, str]] = []
            again: list[tuple[QueryState, str]] = []
            check: list[QueryState] = []
            for state in triaged:
                ev = state.evidence
                if ev.degenerate or (state.decided and not self.cfg.exhaustive):
                    continue
                more: list[str] = []
                if state.passed:  # --all: every intervention once, evidence for base rates
                    fresh = [lb for lb in wanted(ev, self.cfg.exhaustive) if not ev.ran(lb)]
                else:
                    fresh, more = next_asks(ev, self.cfg.exhaustive)
                first += [(state, lb) for lb in fresh]
                again += [(state, lb) for lb in more]
                if not fresh and not more and not state.passed and needs_judge_check(ev):
                    check.append(state)
            if not (first or again or check):
                break
            self._ask(first)
            for r in range(1, self.cfg.repeats):
                self._ask(again, r)
            self._judge_check(check)
            self._decide(triaged)
        for state in triaged:
            if state.passed:
                state.cause = PASSED
        if "single-passage" in self.cfg.interventions:
            self._ask([(s, lb) for s in triaged if not s.evidence.degenerate for lb in s.planned
                       if lb.startswith("single:")])

    def _decide(self, states: list[QueryState]) -> None:
        for state in states:
            if not state.passed:
                state.cause, state.also = decide(state.evidence)


def start(triage: Triage, client: LLMClient) -> None:
    """Resolve the answer plan (``--lang``, prompt budget) on the real client before any call."""
    if triage.cfg.answer is not None:
        triage.plan = AnswerPlan.resolve(triage.cfg.answer, client)
        for line in triage.plan.notices:
            note(line)
