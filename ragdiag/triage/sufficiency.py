"""Sufficient context (Joren et al., "Sufficient Context: A New Lens on Retrieval Augmented Generation
Systems", ICLR 2025) and the reference-free path of ``ragdiag triage`` (docs/commands/triage.md#sufficient-context).

The rater (prompt ``sufficient-context``) reads a question and numbered passages and replies whether they
hold enough to answer, and which passages are needed. Strict parsing (:func:`parse_rating`): a JSON object
with a boolean ``sufficient`` and ``needed``, a list of distinct passage numbers 1..n — non-empty when
sufficient, empty when not. A reply that is not a rating is asked again once (the repair prompt), then the
rating is *undecided* (``sufficient`` None): never a cause.

The reference-free tree (:func:`free_cause`), per failing query, with S_K the rating of the top K and S_P
that of the pool's first ``--pool-k`` passages, the baseline graded without a reference
(:mod:`ragdiag.answers.reference_free`):

1. S_K undecided → ``unexplained``;
2. S_K insufficient and the answer did not abstain → ``unsupported`` (answered without sufficient context);
3. S_K insufficient: S_P undecided → ``unexplained``; S_P insufficient → ``retrieval-miss``; S_P sufficient
   → ``ranking`` when ``inject`` (the needed passages below K moved into the top K, replacing its lowest
   ranked passages the rater does not need) fixes it, else ``unexplained``;
4. S_K sufficient: ``position`` when moving the best-ranked needed passage first fixes it; else
   ``context-size`` when a smaller K that still holds every needed passage (and differs from the
   drop-distractors context: the same context would test two things at once) fixes it; else
   ``distractors`` when the needed passages alone fix it; else ``over-abstains`` when the answer abstained
   with sufficient context, ``generator`` when it answered wrongly.

An intervention *fixes* the query as in :mod:`ragdiag.triage.tree` (reaches ``--fail-below`` or gains 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ragdiag.answers.contexts import for_query
from ragdiag.answers.reference_free import json_object
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt
from ragdiag.llm.runner import run_items
from ragdiag.remote.store import request_key
from ragdiag.triage.interventions import BASELINE, k_label
from ragdiag.triage.tree import Evidence

# The run's Triage and QueryState (ragdiag.triage.run, which imports this module) are typed Any here.
Triage: TypeAlias = Any
QueryState: TypeAlias = Any

PROMPT, REPAIR = "sufficient-context", "sufficient-context-repair"
FREE_INTERVENTIONS = ("inject", "position", "k-sweep", "drop-distractors")


@dataclass(frozen=True)
class Rating:
    """One rater verdict: sufficient (None: undecided), the needed passage ids, the replies, a call error."""

    sufficient: bool | None
    needed: tuple[str, ...] = ()
    replies: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self, passages: int) -> dict[str, Any]:
        return {"sufficient": self.sufficient, "needed": list(self.needed), "passages": passages,
                **({"error": self.error} if self.error else {})}


def parse_rating(reply: str, n: int) -> tuple[bool, list[int]] | None:
    """(sufficient, needed passage numbers) from a rater reply over ``n`` passages, or None when not a rating."""
    data = json_object(reply)
    if data is None:
        return None
    sufficient, needed = data.get("sufficient"), data.get("needed")
    if not isinstance(sufficient, bool) or not isinstance(needed, list):
        return None
    if any(isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= n for i in needed):
        return None
    if len(set(needed)) != len(needed) or bool(needed) != sufficient:
        return None
    return sufficient, sorted(needed)


def rate(client: ChatClient, question: str, doc_ids: tuple[str, ...], texts: list[str], label: str,
         retry_unparsed: bool = False) -> Rating:
    """The rater on these passages (in order): one call, one repair when the reply is not a rating; a cached
    reply that held none is asked again bypassing the cache when ``retry_unparsed``."""
    prompt, repair = load_prompt(PROMPT), load_prompt(REPAIR)
    messages = prompt.messages(query=question, passages=texts)

    def ask(fresh: bool) -> tuple[Rating, bool]:
        again = {"fresh": True} if fresh else {}
        first = client.chat(client.request(messages, prompt.id, json_reply=True, max_tokens=JUDGE_MAX_TOKENS),
                            label, **again)
        replies = [first.text]
        parsed, cached = parse_rating(first.text, len(texts)), first.cached
        if parsed is None:
            follow = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
            second = client.chat(client.request(follow, f"{prompt.id}+{repair.id}", json_reply=True,
                                                max_tokens=JUDGE_MAX_TOKENS), label, **again)
            replies.append(second.text)
            parsed, cached = parse_rating(second.text, len(texts)), cached and second.cached
        if parsed is None:
            return Rating(None, (), replies, "rater reply held no verdict"), cached
        return Rating(parsed[0], tuple(doc_ids[i - 1] for i in parsed[1]), replies), cached

    rating, cached = ask(False)
    if rating.sufficient is None and cached and retry_unparsed:
        rating, _ = ask(True)
    return rating


def free_prompts() -> dict[str, str]:
    """Prompt name → version id of the reference-free path (for the run record)."""
    from ragdiag.answers.reference_free import PROMPT as JUDGE
    from ragdiag.answers.reference_free import REPAIR as JUDGE_REPAIR

    return {name: load_prompt(name).id for name in (JUDGE, JUDGE_REPAIR, PROMPT, REPAIR)}


def rater_request(client: ChatClient, question: str, texts: list[str]) -> dict[str, Any]:
    """The rater's first request (for the dry cost pass)."""
    prompt = load_prompt(PROMPT)
    return client.request(prompt.messages(query=question, passages=texts), prompt.id, json_reply=True,
                          max_tokens=JUDGE_MAX_TOKENS)


@dataclass
class Sufficiency:
    """A query's ratings: the top K, then (insufficient at K and abstained) the pool."""

    top_k: Rating | None = None
    pool: Rating | None = None
    pool_k: int = 0

    def to_json(self, k: int) -> dict[str, Any]:
        return {"top_k": None if self.top_k is None else self.top_k.to_json(k),
                "pool": None if self.pool is None else self.pool.to_json(self.pool_k)}


def _one(ev: Evidence, label: str) -> bool | None:
    if label not in ev.planned:
        return False
    return ev.fixes(label) if ev.ran(label) else None


def free_cause(ev: Evidence, suff: Sufficiency, abstained: bool | None) -> tuple[str | None, list[str]]:
    """(primary cause, later causes whose intervention also fixed it); (None, []) while a rating or an
    intervention that applies is still to run (the module docstring's tree)."""
    if suff.top_k is None:
        return None, []
    if suff.top_k.sufficient is None:
        return "unexplained", []
    if not suff.top_k.sufficient:
        if abstained is False:
            return "unsupported", []
        if suff.pool is None:
            return None, []
        if suff.pool.sufficient is None:
            return "unexplained", []
        if not suff.pool.sufficient:
            return "retrieval-miss", []
        injected = _one(ev, "inject")
        return (None, []) if injected is None else ("ranking" if injected else "unexplained", [])
    tests = [("position", [_one(ev, "position")]), ("context-size", [_one(ev, lb) for lb in ev.smaller_ks()]),
             ("distractors", [_one(ev, "drop-distractors")])]
    for i, (cause, results) in enumerate(tests):
        if any(results):
            also = [c for c, later in tests[i + 1:] if any(later)]
            return cause, also
        if None in results:
            return None, []
    return ("over-abstains" if abstained else "generator"), []


def sufficient_contexts(top: list[str], needed: tuple[str, ...], pool: list[str], k: int, ks: tuple[int, ...],
                        enabled: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Sufficient at K: position (the best-ranked needed passage first), the smaller Ks that hold every needed
    passage and differ from the drop-distractors context, drop-distractors (the needed passages alone)."""
    out: dict[str, tuple[str, ...]] = {}
    drop = tuple(d for d in top if d in needed)
    if "position" in enabled and top and top[0] not in needed:
        first = drop[0]
        out["position"] = (first, *(d for d in top if d != first))
    if "k-sweep" in enabled:
        for c in sorted(ks):
            cut = tuple(pool[:c])
            if c < k and set(needed) <= set(cut) and cut != drop:
                out[k_label(c)] = cut
    if "drop-distractors" in enabled and drop != tuple(top):
        out["drop-distractors"] = drop
    return out


def inject_context(top: list[str], needed: tuple[str, ...]) -> tuple[str, ...] | None:
    """The needed passages below K moved into the top K, each replacing the lowest-ranked top-K passage the
    rater does not need; None when no needed passage lies below K or there is no room."""
    below = [d for d in needed if d not in top]
    spare = [i for i in range(len(top) - 1, -1, -1) if top[i] not in needed]
    if not below or len(spare) < len(below):
        return None
    context = list(top)
    for doc, i in zip(below, spare):
        context[i] = doc
    return tuple(context)


class FreeRun:
    """The reference-free stages of one wave of a :class:`ragdiag.triage.run.Triage` (see the module docstring)."""

    def __init__(self, triage: Triage) -> None:
        self.triage = triage
        self.cfg = triage.cfg
        self.pool_k = pool_k_of(triage)

    def _rate(self, states: list[QueryState], which: str) -> None:
        """Rate the top K (``which`` = top_k) or the pool of these queries, in parallel, each call on its query."""
        client = self.triage.client
        retry = client.config.cache == "rw"

        def one(state: QueryState) -> Rating:
            ids = tuple(state.query.pool[: self.cfg.k if which == "top_k" else self.pool_k])
            with for_query(state.query.id):
                return rate(client, state.query.text, ids, [self.triage.data.doc_text[d] for d in ids],
                            f"sufficient-context {which} {state.query.id}", retry)

        outcome = run_items(client, one, states, [f"sufficient-context {which} {s.query.id}" for s in states],
                            f"sufficient context ({which})", self.triage.progress)
        for state, result, error in zip(states, outcome.results, outcome.errors):
            rating = result if result is not None else Rating(None, error=error)
            setattr(state.sufficiency, which, rating)
        paid = client.calls_of()
        for state in states:
            state.calls = paid.get(state.query.id, 0)

    def _plan(self, state: QueryState) -> None:
        """The interventions that apply once the ratings are known (added to the state's planned contexts)."""
        suff, q = state.sufficiency, state.query
        top = q.pool[: self.cfg.k]
        enabled = tuple(n for n in FREE_INTERVENTIONS if n in self.cfg.interventions)
        added: dict[str, tuple[str, ...]] = {}
        if suff.top_k is not None and suff.top_k.sufficient:
            added = sufficient_contexts(top, suff.top_k.needed, q.pool, self.cfg.k, self.cfg.ks, enabled)
        elif suff.pool is not None and suff.pool.sufficient and "inject" in enabled:
            injected = inject_context(top, suff.pool.needed)
            added = {"inject": injected} if injected is not None else {}
        for label, ids in added.items():
            if label not in state.planned:
                state.planned[label] = ids
                state.evidence.planned.add(label)

    def _decide(self, states: list[QueryState], again: bool = False) -> None:
        """Each undecided query's cause (``again``: every query's, so ``also`` takes in later interventions)."""
        for state in states:
            if again or not state.decided:
                baseline = state.answered.get(BASELINE)
                state.cause, state.also = free_cause(state.evidence, state.sufficiency,
                                                     baseline.abstained if baseline is not None else None)

    def wave(self, wave: list[QueryState]) -> None:
        """Baseline (graded without a reference), the ratings, then the interventions stage by stage."""
        triage, cfg = self.triage, self.cfg
        triage._ask([(s, BASELINE) for s in wave])
        for state in wave:
            baseline = state.answered.get(BASELINE)
            grade = state.evidence.grades.get(BASELINE)
            if grade is None:
                state.left_out = f"baseline not graded: {baseline.error if baseline is not None else 'no answer'}"
                continue
            state.triaged = cfg.all_queries or grade < cfg.fail_below
            state.passed = grade >= cfg.fail_below
            state.evidence.sufficient_context = True
        failing = [s for s in wave if s.triaged and not s.passed]
        self._rate(failing, "top_k")
        for state in failing:
            self._plan(state)
        self._decide(failing)
        need_pool = [s for s in failing if not s.decided and s.sufficiency.top_k is not None
                     and s.sufficiency.top_k.sufficient is False]
        for state in need_pool:
            state.sufficiency.pool_k = self.pool_k
        self._rate(need_pool, "pool")
        for state in need_pool:
            self._plan(state)
        self._decide(failing)
        labels = ["inject", "position", *(k_label(c) for c in sorted(cfg.ks) if c < cfg.k), "drop-distractors"]
        for label in labels:
            todo = [(s, label) for s in failing if (cfg.exhaustive or not s.decided) and label in s.planned
                    and label not in s.answered]  # --exhaustive: every intervention that applies
            triage._ask(todo)
            self._decide(failing, again=cfg.exhaustive)
        for state in wave:
            if state.passed:
                state.cause = "passed"  # ragdiag.triage.run.PASSED
        if "single-passage" in cfg.interventions:
            triage._ask([(s, lb) for s in wave if s.triaged for lb in s.planned if lb.startswith("single:")])


def pool_k_of(triage: Triage) -> int:
    """The rater's deeper pool: ``--pool-k``, else the candidate pool (``--depth``)."""
    return triage.cfg.pool_k or triage.data.depth or max((len(s.query.pool) for s in triage.states), default=0)


def worst_case_extra(triage: Triage, state: QueryState) -> int:
    """Reference-free calls beyond the baseline a query may need: its two ratings unless cached (dry look-up),
    and the most interventions one branch can run (inject alone, or position, the smaller Ks and
    drop-distractors), 2 calls each: their contexts depend on the rater, so they are counted at their most."""
    cfg, client, q = triage.cfg, triage.client, state.query
    uncached = 0
    for depth in (cfg.k, pool_k_of(triage)):
        ids = q.pool[:depth]
        request = rater_request(client, q.text, [triage.data.doc_text[d] for d in ids])
        uncached += client.cache is None or client.config.cache == "refresh" or client.cache.get(request_key(request)) is None
    smaller = sum(1 for c in cfg.ks if c < cfg.k)
    return uncached + 2 * max(1, 2 + smaller)
