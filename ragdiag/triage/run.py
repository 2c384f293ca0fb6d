"""Run ``ragdiag triage``: the baseline, then the interventions in the decision tree's order.

Every context (a query and the ordered passages shown to the generator) is answered and graded by
:func:`ragdiag.answers.contexts.answer_all` — the ``generate`` prompt (fenced passages), the ``grade``
judge, the reference gate, the shared runner (workers, ``--batch``) and the call cache — so a rerun
pays nothing twice and an interrupted run resumes. Steps:

1. cost up front: per query, the new calls its baseline and every intervention that applies would
   need (a dry pass over the cache, :func:`ragdiag.answers.contexts.count_needed`); ``--max-calls``
   below the cheapest query's cost is refused before any call;
2. queries go in waves whose worst-case cost fits what is left of ``--max-calls`` (a hard cap;
   queries that do not fit are listed as left out);
3. per wave: the baseline (top K), then the failing queries (grade < ``--fail-below``; ``--all``: all)
   through the stages of :data:`STAGES`; a query leaves once :func:`ragdiag.triage.tree.decide` knows
   its cause (``--exhaustive``: every intervention in one stage);
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
from ragdiag.triage.interventions import BASELINE, k_label, variants
from ragdiag.triage.sufficiency import FreeRun, Sufficiency, worst_case_extra
from ragdiag.triage.tree import Evidence, decide

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


def stages(cfg: TriageConfig, k: int) -> list[list[str]]:
    """The intervention labels per stage, in the tree's order (``--exhaustive``: one stage with all)."""
    smaller = [[k_label(c)] for c in cfg.ks if c < k]
    larger = [k_label(c) for c in cfg.ks if c > k]
    order = [["closed-book", "oracle"], ["inject"], ["position"], ["drop-distractors"], *smaller]
    if cfg.exhaustive:
        return [[lb for stage in order for lb in stage] + larger]
    return order


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
        for q in data.queries:
            planned = plan_query(q, cfg, oracle_ok)
            if references is None and not q.relevant:  # no ideal answer can be generated: nothing to grade
                planned = {}
            if cfg.reference_free:  # the interventions wait for the rater (ragdiag.triage.sufficiency)
                planned = {lb: ids for name in (BASELINE, "single-passage") if name == BASELINE or name in cfg.interventions
                           for lb, ids in variants(q, name, cfg.k, cfg.ks, cfg.ideal_cap).items()}
            ev = Evidence(False, bool(q.relevant), q.first_relevant_rank() is not None, cfg.k, cfg.fail_below,
                          {lb for lb in planned if lb != BASELINE and not lb.startswith("single:")})
            self.states.append(QueryState(q, planned, ev))
        self._baseline = {s.query.id: s.planned[BASELINE] for s in self.states if BASELINE in s.planned}

    def job(self, contexts: list[tuple[QueryState, str]]) -> AnswerJob:
        """An :class:`AnswerJob` for these (query, label) contexts, each distinct context once."""
        queries = {s.query.id: s.query for s, _ in contexts}
        unique = list(dict.fromkeys(Context(s.query.id, s.planned[lb]) for s, lb in contexts))
        job = AnswerJob({q: t.text for q, t in queries.items()}, self.data.doc_text.__getitem__,
                        {} if self.references is not None or self.cfg.reference_free else {q: t.relevant[: self.cfg.ideal_cap]
                                                                for q, t in queries.items() if t.relevant},
                        unique, grading=self.cfg.grading,
                        references=None if self.references is None else {q: self.references[q] for q in queries},
                        retry_unparsed=True,
                        given={Context(q, self._baseline[q]): a for q, a in self.given.items()
                               if q in queries and self._baseline.get(q)},
                        reference_free=self.cfg.reference_free)
        job.plan = self.plan
        return job

    def worst_case(self) -> dict[str, Any]:
        """Per query, the new calls of its baseline and every planned intervention (dry pass over the cache)."""
        for state in self.states:
            labels = list(state.planned)
            state.worst = count_needed(self.client, self.job([(state, lb) for lb in labels])).total if labels else 0
            if self.cfg.reference_free and labels:
                state.worst += worst_case_extra(self, state)
        paying = [s.worst for s in self.states if s.worst > 0]
        return {"worst_case_calls": sum(s.worst for s in self.states), "cheapest_query": min(paying, default=0),
                "dearest_query": max(paying, default=0), "exact": self.client.cache is not None}

    def announce(self, cost: dict[str, Any]) -> None:
        """The cost on stderr before any call (single-passage: K answers and K grades per triaged query)."""
        single = (f"; single-passage adds up to {2 * self.cfg.k} calls per triaged query (K answers, K grades)"
                  if "single-passage" in self.cfg.interventions else "")
        cap = "" if self.cfg.max_calls is None else f"; --max-calls {self.cfg.max_calls} is a hard cap"
        note(f"cost before any call: at most {cost['worst_case_calls']} new LLM calls if every query fails and every "
             f"intervention runs (one query: {cost['cheapest_query']}–{cost['dearest_query']}); the tree stops once "
             f"a cause is known{single}{cap}")

    def check_budget(self, cost: dict[str, Any]) -> None:
        """``--max-calls`` below the cost of one query: refused before any call."""
        cap = self.cfg.max_calls
        if cap is not None and cost["cheapest_query"] > cap:
            raise RagdiagError(f"--max-calls {cap} is below the cost of one query (at least {cost['cheapest_query']} "
                               f"new calls: baseline and interventions); nothing was sent. Raise --max-calls")

    def run(self) -> None:
        """Waves of queries whose worst case fits the budget left; each through baseline and stages."""
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

    def _ask(self, contexts: list[tuple[QueryState, str]]) -> None:
        """Answer and grade these contexts; store each label's result and the calls on its query."""
        if not contexts:
            return
        job = answer_all(self.client, self.job(contexts), self.progress)
        counted: set[Context] = set()
        for state, label in contexts:
            context = Context(state.query.id, state.planned[label])
            answered = job.answered[context]
            state.answered[label] = answered
            if not label.startswith("single:"):
                state.evidence.grades[label] = answered.grade
            if context not in counted:
                counted.add(context)
                state.reused += answered.reused
            if label == BASELINE:
                state.evidence.degenerate = state.query.id in job.ideal_kinds
        paid = self.client.calls_of()
        for state in {id(s): s for s, _ in contexts}.values():
            state.calls = paid.get(state.query.id, 0)

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
            if state.triaged and not state.passed:
                state.cause, state.also = decide(state.evidence)
                if self.cfg.exhaustive and state.cause not in (None, "reference"):
                    state.cause = None  # every intervention runs; decided at the end
        triaged = [s for s in wave if s.triaged]
        for labels in stages(self.cfg, self.cfg.k):
            todo = [(s, lb) for s in triaged if not s.decided and not s.evidence.degenerate
                    for lb in labels if lb in s.planned]
            self._ask(todo)
            for state in triaged:
                if not state.decided and not state.passed:
                    state.cause, state.also = decide(state.evidence)
        for state in triaged:
            if state.passed:
                state.cause = PASSED
        if "single-passage" in self.cfg.interventions:
            self._ask([(s, lb) for s in triaged if not s.evidence.degenerate for lb in s.planned
                       if lb.startswith("single:")])


def start(triage: Triage, client: LLMClient) -> None:
    """Resolve the answer plan (``--lang``, prompt budget) on the real client before any call."""
    if triage.cfg.answer is not None:
        triage.plan = AnswerPlan.resolve(triage.cfg.answer, client)
        for line in triage.plan.notices:
            note(line)
