"""The attribution decision tree of ``ragdiag triage`` (docs/commands/triage.md#the-decision-tree).

Over the paired grades of one failing query (g_b the baseline's, g_v an intervention's), with
F = ``--fail-below``: a variant is *right* when g_v ≥ F, and *fixes* the query when g_v ≥ F or
g_v − g_b ≥ 2. The first cause whose test holds, in this order, is the primary cause:

1. ``reference`` — the ideal or reference answer is degenerate (the reference gate flagged it);
2. ``qrels-gap`` — no relevant passage is known for the query;
3. ``parametric`` — closed-book is right and every variant with references run is wrong;
4. ``generator`` — the oracle (only the relevant passages) does not fix it;
5. ``retrieval-miss`` — no relevant passage in the candidate pool, and the oracle fixes it (without the
   oracle — no reference answers, or left out of ``--interventions`` — the qrels alone decide: no relevant
   passage in the pool is a retrieval miss, never ``unexplained``);
6. ``ranking`` — a relevant passage in the pool below K (none in the top K) and inject fixes it;
7. ``position`` — a relevant passage in the top K, not first, and moving it first fixes it;
8. ``distractors`` — the top K without its non-relevant passages fixes it;
9. ``context-size`` — a smaller K fixes it;
10. ``unexplained``.

A test is *unknown* while its intervention applies but has not run: the tree is decided once every
test before the first true one is known to be false, which is what lets :mod:`ragdiag.triage.run`
run interventions in this order and stop early. ``also`` lists the later causes whose intervention
also fixed the query (complete with ``--exhaustive``).

Each cause rests on evidence (:func:`evidence_of`): ``qrels`` (the relevant passages: which exist, where
they rank, what the oracle, inject, position and drop-distractors contexts hold) and what the grades compare
with — ``references`` (``--answers``) or, without them, the ideal answer built from the qrels (``qrels``);
on the reference-free path (neither), ``sufficient-context``: the rater's verdicts and grades without a
reference (:mod:`ragdiag.triage.sufficiency`, which also decides ``unsupported`` and ``over-abstains``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragdiag.triage.interventions import BASELINE

CAUSES = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size", "unsupported", "over-abstains", "unexplained")
FIX_CAUSES = ("parametric", "retrieval-miss", "ranking", "position", "distractors", "context-size")
FIXES = {
    "reference": "fix the reference: the ideal or reference answer is degenerate (the reference gate flagged it)",
    "qrels-gap": "judge these queries: no relevant passage is known, so no retrieval cause can be tested",
    "parametric": "the model knows the answer but the references mislead it: filter the context or let it answer closed-book",
    "generator": "change the generator or its prompt: it fails even with only the relevant passages (reference-free: with sufficient context)",
    "retrieval-miss": "raise recall (better or hybrid retriever, query rewriting, a deeper pool): the relevant passage is never retrieved",
    "ranking": "a reranker or a larger K is the lever: the relevant passage is retrieved but ranked below K",
    "position": "put the best passage first (a reranker, relevance-first ordering): its position costs the answer",
    "distractors": "filter distractors (a relevance filter, a reranker score cut-off): non-relevant passages mislead the answer",
    "context-size": "cut K: fewer passages fix the answer",
    "unsupported": "make the generator abstain when the context is insufficient (hallucination risk): it answered without sufficient context",
    "over-abstains": "let the generator answer from sufficient context (its prompt or model): it declined although the context sufficed",
    "unexplained": "no intervention fixed it: read the answers (judge error, or a fault outside retrieval)",
}


@dataclass
class Evidence:
    """What the tree reads for one query: the gate, the qrels, the planned variants and their grades."""

    degenerate: bool
    has_relevant: bool
    relevant_in_pool: bool
    k: int
    fail_below: float
    planned: set[str] = field(default_factory=set)  # variant labels that apply and are enabled
    grades: dict[str, float | None] = field(default_factory=dict)  # variant label → grade (None: no grade)
    sufficient_context: bool = False  # reference-free: the causes rest on the sufficient-context rater

    def ran(self, label: str) -> bool:
        return label in self.grades

    def right(self, label: str) -> bool:
        g = self.grades.get(label)
        return g is not None and g >= self.fail_below

    def fixes(self, label: str) -> bool:
        g, base = self.grades.get(label), self.grades.get(BASELINE)
        return g is not None and (g >= self.fail_below or (base is not None and g - base >= 2))

    def smaller_ks(self) -> list[str]:
        return sorted((lb for lb in self.planned if lb.startswith("k-sweep@") and int(lb.split("@")[1]) < self.k),
                      key=lambda lb: int(lb.split("@")[1]))


def _one(ev: Evidence, label: str) -> bool | None:
    """The test 'intervention ``label`` fixes it': False when it does not apply, None while not run."""
    if label not in ev.planned:
        return False
    return ev.fixes(label) if ev.ran(label) else None


def status(ev: Evidence, cause: str) -> bool | None:
    """True, False, or None (unknown: an intervention that applies has not run yet)."""
    if cause == "reference":
        return ev.degenerate
    if cause == "qrels-gap":
        return not ev.has_relevant
    if cause == "parametric":
        if "closed-book" not in ev.planned:
            return False
        if not ev.ran("closed-book"):
            return None
        if not ev.right("closed-book"):
            return False
        if "oracle" in ev.planned and not ev.ran("oracle"):
            return None
        return not any(ev.right(lb) for lb in ev.grades if lb != "closed-book")
    if cause == "generator":
        fixed = _one(ev, "oracle")
        return False if "oracle" not in ev.planned else (None if fixed is None else not fixed)
    if cause == "retrieval-miss":
        if ev.relevant_in_pool:
            return False
        return _one(ev, "oracle") if "oracle" in ev.planned else ev.has_relevant  # no oracle: the qrels decide
    if cause in ("ranking", "position", "distractors"):
        return _one(ev, {"ranking": "inject", "distractors": "drop-distractors"}.get(cause, cause))
    if cause == "context-size":
        tests = [_one(ev, lb) for lb in ev.smaller_ks()]
        return True if any(tests) else (None if None in tests else False)
    # unexplained is always true; unsupported and over-abstains are decided by the sufficient-context rater
    # (ragdiag.triage.sufficiency), never by this tree
    return cause not in FREE_ONLY


QRELS_ONLY = ("qrels-gap",)
FREE_ONLY = ("unsupported", "over-abstains")
GRADES_ONLY = ("parametric", "context-size")  # contexts built without the qrels: only the grades' basis


def evidence_of(ev: Evidence, cause: str, references: bool) -> list[str]:
    """What ``cause`` rests on for this query: ``qrels`` and/or ``references`` (the grades' basis when given).

    Without references the grades compare with the ideal answer built from the qrels; a retrieval miss
    decided without the oracle rests on the qrels alone.
    """
    if ev.sufficient_context:  # reference-free: graded without a reference, decided by the rater
        return ["sufficient-context"]
    basis = "references" if references else "qrels"
    if cause in QRELS_ONLY or (cause == "retrieval-miss" and not ev.ran("oracle")):
        return ["qrels"]
    if cause in GRADES_ONLY or cause == "reference":
        return [basis]
    return sorted({"qrels", basis})


def decide(ev: Evidence) -> tuple[str | None, list[str]]:
    """(primary cause, the later causes that also fixed it); (None, []) while undecided."""
    for i, cause in enumerate(CAUSES):
        verdict = status(ev, cause)
        if verdict is None:
            return None, []
        if verdict:
            also = [c for c in CAUSES[i + 1:] if c in FIX_CAUSES and status(ev, c)]
            return cause, also
    raise AssertionError("unexplained always holds")  # pragma: no cover
