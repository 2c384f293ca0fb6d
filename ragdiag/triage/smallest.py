"""The primary cause by the smallest fix (docs/commands/triage.md#the-decision-tree).

An intervention's *size* is how much of the baseline's context it changes: |C_v Δ C_b|, the passages it
adds plus those it removes (a reorder — ``position``, ``position@last`` — changes none: size 0). Among
the interventions that fix a query (held on every repeat, :func:`holds`), the one of least size names
the primary cause; among equals, the order of :data:`TIE_ORDER` (position, drop-distractors, inject,
k-sweep, oracle, closed-book: the fewest kinds of change first). Every other cause whose intervention
fixed the query goes to ``also``. So a query that k = 1 fixes is ``context-size`` even when the oracle
(a bigger change) does not fix it; ``generator`` is left for queries that nothing fixes.

Interventions run in this order, size by size, so the tree stops at the first size that fixes.
"""

from __future__ import annotations

from typing import Protocol


class Evidence(Protocol):
    """What the smallest fix reads of a query (:class:`ragdiag.triage.tree.Evidence`)."""

    relevant_in_pool: bool
    k: int
    planned: set[str]
    grades: dict[str, float | None]
    sizes: dict[str, int]
    repeats: int
    repeat_grades: dict[str, list[float | None]]

    def ran(self, label: str) -> bool: ...

    def fixes(self, label: str) -> bool: ...

    def fixes_with(self, g: float | None) -> bool: ...

TIE_ORDER = ("position", "drop-distractors", "inject", "k-sweep", "oracle", "closed-book")
CAUSE_OF = {"position": "position", "drop-distractors": "distractors", "inject": "ranking",
            "k-sweep": "context-size", "closed-book": "parametric", "oracle": "retrieval-miss"}


def family(label: str) -> str:
    """``position@last`` → ``position``, ``drop-distractors:d7`` → ``drop-distractors``."""
    return label.split("@")[0].split(":")[0]


def size(context: tuple[str, ...], baseline: tuple[str, ...]) -> int:
    """Passages added plus passages removed: |C_v Δ C_b|."""
    return len(set(context) ^ set(baseline))


def cause_of(ev: Evidence, label: str) -> str | None:
    """The cause a fix by ``label`` names (None: the oracle with a relevant passage in the pool — the
    generator can answer, but no single change found the fault — and a K above the baseline's)."""
    name = family(label)
    if name == "oracle" and ev.relevant_in_pool:
        return None
    if name == "k-sweep" and int(label.split("@")[1]) >= ev.k:
        return None
    return CAUSE_OF.get(name)


def ordered(ev: Evidence) -> list[str]:
    """The planned interventions, smallest first (ties: :data:`TIE_ORDER`, then the larger k first)."""
    def key(label: str) -> tuple[int, int, int, str]:
        k = -int(label.split("@")[1]) if family(label) == "k-sweep" else 0
        return ev.sizes.get(label, 0), TIE_ORDER.index(family(label)), k, label
    return sorted((lb for lb in ev.planned if family(lb) in TIE_ORDER), key=key)


def holds(ev: Evidence, label: str) -> bool | None:
    """Does ``label`` fix the query on every repeat? False when it does not apply or failed once; None
    while a repeat it needs has not run."""
    if label not in ev.planned:
        return False
    if not ev.ran(label):
        return None
    if not ev.fixes(label):
        return False
    more = ev.repeat_grades.get(label, [])
    if len(more) < ev.repeats - 1:
        return None
    return all(ev.fixes_with(g) for g in more)


def smallest_fix(ev: Evidence) -> tuple[str | None, list[str], bool]:
    """(primary, also, decided): the smallest fixing intervention's cause and the others' causes;
    undecided while an intervention no larger than the first fix has not run (or its repeats)."""
    primary: str | None = None
    also: list[str] = []
    for label in ordered(ev):
        cause = cause_of(ev, label)
        if cause is None:
            continue
        held = holds(ev, label)
        if held is None and primary is None:
            return None, [], False
        if held and primary is None:
            primary = cause
        elif held and cause != primary and cause not in also:
            also.append(cause)
    return primary, also, True


def wanted(ev: Evidence, exhaustive: bool) -> list[str]:
    """:func:`ordered`, without the k-sweep cut-offs above K (only ``--exhaustive`` runs them: they name no cause)."""
    return [lb for lb in ordered(ev) if exhaustive or family(lb) != "k-sweep" or int(lb.split("@")[1]) < ev.k]


def next_asks(ev: Evidence, exhaustive: bool) -> tuple[list[str], list[str]]:
    """(labels to ask on repeat 0, labels whose further repeats to ask): the smallest size not yet known
    (``--exhaustive``: every one)."""
    unknown = [lb for lb in wanted(ev, exhaustive) if holds(ev, lb) is None]
    if not unknown:
        return [], []
    first = ev.sizes.get(unknown[0], 0)
    same = [lb for lb in unknown if exhaustive or ev.sizes.get(lb, 0) == first]
    fresh = [lb for lb in same if not ev.ran(lb)]
    return (fresh, []) if fresh else ([], same)
