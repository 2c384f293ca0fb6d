"""The interventions of ``ragdiag triage``: each one is a changed context for a failing query (one
generation + one grading), and :func:`variants` builds them from the query's pool and qrels.

With top K = the first K passages of the pool and R the relevant ids (qrels, best first):

1. ``oracle`` — only the relevant passages, R[:ideal_cap];
2. ``inject`` — when a relevant passage of the pool is missing from the top K (even when another one is
   in it: an answer split across ranks 1 and 7): the best missing one (highest qrels grade, then rank)
   replaces the lowest-ranked non-relevant top-K passage;
3. ``position`` — when a relevant passage is in the top K but not first: the best-ranked one moved first;
   ``position@last`` — when it is not last: moved last (lost in the middle, a bias to the last passage);
4. ``drop-distractors`` — when the top K holds relevant and non-relevant passages: the relevant ones only,
   when that differs from the oracle's context (else it would change the order, the length and the
   passages at once and prove nothing); then instead ``drop-distractors:<id>``, the top K without one
   passage, for each non-relevant one (and each relevant one when two or more are in the top K: a
   relevant passage that contradicts the others);
5. ``k-sweep`` — the first k passages for each k of the cut-offs other than K ({1, 3, K, 2K} by default);
6. ``closed-book`` — no references;
7. ``single-passage`` (opt-in) — each top-K passage alone: its grade is its utility (eRAG,
   Salemi & Zamani, SIGIR 2024).
"""

from __future__ import annotations

from ragdiag.errors import RagdiagError
from ragdiag.triage.inputs import TriageQuery

INTERVENTIONS = ("oracle", "inject", "position", "drop-distractors", "k-sweep", "closed-book", "single-passage")
DEFAULT_INTERVENTIONS = INTERVENTIONS[:-1]
BASELINE = "baseline"


def parse_interventions(text: str) -> tuple[str, ...]:
    """``oracle,inject`` → the names, in the order of :data:`INTERVENTIONS` (unknown → one-line error)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in INTERVENTIONS:
            raise RagdiagError(f"--interventions: unknown intervention '{name}' (expected some of {', '.join(INTERVENTIONS)})")
    if not names:
        raise RagdiagError("--interventions: give at least one intervention")
    return tuple(n for n in INTERVENTIONS if n in names)


def sweep_ks(k: int, given: tuple[int, ...] | None) -> tuple[int, ...]:
    """The k-sweep cut-offs: ``given`` or {1, 3, K, 2K}, sorted, without repeats."""
    return tuple(sorted(set(given if given else (1, 3, k, 2 * k))))


def k_label(k: int) -> str:
    return f"k-sweep@{k}"


def variants(query: TriageQuery, name: str, k: int, ks: tuple[int, ...], ideal_cap: int) -> dict[str, tuple[str, ...]]:
    """The contexts (label → ordered passage ids) intervention ``name`` gives ``query``; {} when it does not apply."""
    top = query.pool[:k]
    relevant = set(query.relevant)
    in_top = [d for d in top if d in relevant]
    if name == BASELINE:
        return {BASELINE: tuple(top)}
    if name == "closed-book":
        return {name: ()}
    if not query.relevant and name != "k-sweep" and name != "single-passage":
        return {}
    if name == "oracle":
        return {name: tuple(query.relevant[:ideal_cap])}
    if name == "inject":
        missing = [d for d in query.relevant if d in query.pool and d not in top]  # best grade first
        out = [d for d in top if d not in relevant]
        if not missing or not out:
            return {}
        best = min(missing, key=lambda d: (query.relevant.index(d), query.pool.index(d)))
        return {name: tuple(best if d == out[-1] else d for d in top)}
    if name == "position":
        if not in_top:
            return {}
        moved = in_top[0]
        rest = tuple(d for d in top if d != moved)
        first = {} if top[0] == moved else {name: (moved, *rest)}
        return {**first, **({} if top[-1] == moved else {f"{name}@last": (*rest, moved)})}
    if name == "drop-distractors":
        if not in_top or len(in_top) == len(top):
            return {}
        if set(in_top) != set(query.relevant[:ideal_cap]):
            return {name: tuple(in_top)}
        left = [d for d in top if d not in relevant or len(in_top) > 1]
        return {f"{name}:{d}": tuple(x for x in top if x != d) for d in left}
    if name == "k-sweep":
        return {k_label(c): tuple(query.pool[:c]) for c in ks if c != k and c <= len(query.pool)}
    if name == "single-passage":
        return {f"single:{d}": (d,) for d in top}
    raise RagdiagError(f"unknown intervention '{name}'")
