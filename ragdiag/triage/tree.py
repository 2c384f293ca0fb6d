"""The attribution decision tree of ``ragdiag triage`` (docs/commands/triage.md#the-decision-tree).

Over the paired grades of one failing query (g_b the baseline's, g_v an intervention's), with
F = ``--fail-below``: a variant is *right* when g_v ≥ F, and *fixes* the query when g_v ≥ F or
g_v − g_b ≥ 2 — on every repeat (``--repeats N``: g_b the best baseline repeat). The primary cause:

1. ``reference`` — the ideal or reference answer is degenerate (the reference gate flagged it);
2. ``qrels-gap`` — no relevant passage is known for the query;
3. with repeats, a baseline right on one repeat and wrong on another: ``judge`` when the answers were the
   same text (the grade moved, not the answer), else ``generator`` (the same context, different answers);
4. the cause of the *smallest* intervention that fixes it (:mod:`ragdiag.triage.smallest`): ``position``
   (first or last), ``distractors``, ``ranking`` (inject), ``context-size`` (a smaller K),
   ``retrieval-miss`` (the oracle, no relevant passage in the pool), ``parametric`` (closed-book);
5. nothing fixes it: without the oracle and with no relevant passage in the pool, ``retrieval-miss`` on the
   qrels alone; else the judge consistency check (the failing answer re-graded, the reference graded as
   a candidate): inconsistent → ``judge``; consistent → ``generator`` when the oracle ran and did not fix
   it, else ``unexplained``.

A test is *unknown* while its intervention applies but has not run: the tree is decided once every
intervention no larger than the first fix is known, which is what lets :mod:`ragdiag.triage.run` run
them smallest first and stop early. ``also`` lists the other causes whose intervention also fixed the
query (complete with ``--exhaustive``).

Each cause rests on evidence (:func:`evidence_of`): ``qrels`` (the relevant passages: which exist, where
they rank, what the oracle, inject, position and drop-distractors contexts hold) and what the grades compare
with — ``references`` (``--answers``) or, without them, the ideal answer built from the qrels (``qrels``);
on the reference-free path (neither), ``sufficient-context``: the rater's verdicts and grades without a
reference (:mod:`ragdiag.triage.sufficiency`, which also decides ``unsupported`` and ``over-abstains``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragdiag.triage.interventions import BASELINE
from ragdiag.triage.smallest import holds, smallest_fix

CAUSES = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size", "unsupported", "over-abstains", "judge", "unexplained")
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
    "judge": "fix the judge before the system: it grades the same answer (or the reference itself) differently; re-grade with another judge or a panel",
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
    sizes: dict[str, int] = field(default_factory=dict)  # variant label → |C_v Δ C_b| (smallest.size)
    repeats: int = 1  # --repeats: a fix counts when it holds on every one
    repeat_grades: dict[str, list[float | None]] = field(default_factory=dict)  # label → grades of repeats 1..N-1
    flaky: str | None = None  # the baseline's repeats disagree: "judge" (same answer) or "generator"
    judge: bool | None = None  # the judge consistency check: True consistent, False not, None not run

    def ran(self, label: str) -> bool:
        return label in self.grades

    def right(self, label: str) -> bool:
        g = self.grades.get(label)
        return g is not None and g >= self.fail_below

    def fixes_with(self, g: float | None) -> bool:
        """g ≥ F, or g − g_b ≥ 2 with g_b the best baseline repeat."""
        bases = [b for b in (self.grades.get(BASELINE), *self.repeat_grades.get(BASELINE, [])) if b is not None]
        return g is not None and (g >= self.fail_below or (bool(bases) and g - max(bases) >= 2))

    def fixes(self, label: str) -> bool:
        return self.fixes_with(self.grades.get(label))

    def smaller_ks(self) -> list[str]:
        return sorted((lb for lb in self.planned if lb.startswith("k-sweep@") and int(lb.split("@")[1]) < self.k),
                      key=lambda lb: int(lb.split("@")[1]))


QRELS_ONLY = ("qrels-gap",)
GRADES_ONLY = ("parametric", "context-size", "judge")  # no context built from the qrels: only the grades' basis


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


def needs_judge_check(ev: Evidence) -> bool:
    """Nothing fixed the query and its cause now rests on the judge consistency check, not run yet."""
    primary, _, known = smallest_fix(ev)
    if not known or primary is not None or ev.judge is not None or ev.degenerate or not ev.has_relevant:
        return False
    oracle_known = "oracle" not in ev.planned or holds(ev, "oracle") is not None
    return oracle_known and (ev.relevant_in_pool or "oracle" in ev.planned) and ev.flaky is None


def decide(ev: Evidence) -> tuple[str | None, list[str]]:
    """(primary cause, the other causes whose intervention also fixed it); (None, []) while undecided."""
    if ev.degenerate:
        return "reference", []
    if not ev.has_relevant:
        return "qrels-gap", []
    if ev.flaky is not None:
        return ev.flaky, []
    primary, also, known = smallest_fix(ev)
    if not known:
        return None, []
    if primary is not None:
        return primary, also
    if not ev.relevant_in_pool and "oracle" not in ev.planned:
        return "retrieval-miss", []  # no oracle: the qrels alone decide
    oracle = holds(ev, "oracle") if "oracle" in ev.planned else True
    if oracle is None or ev.judge is None:
        return None, []
    if not ev.judge:
        return "judge", []
    return ("unexplained" if oracle else "generator"), []
