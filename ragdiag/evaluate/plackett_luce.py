"""Plackett–Luce listwise refinement of a query's Top-N (paper 001 §3.3.1; rag-gs stage S6).

State per item i: a utility θ_i and accumulated Fisher information I_i. A listwise judgement
orders a batch of m items π_1 ≻ … ≻ π_m; its Plackett–Luce log-likelihood is
Σ_s [θ_{π_s} − log Σ_{t≥s} exp θ_{π_t}], whose gradient for item π_t is
Σ_{s≤t} (1[t = s] − p_{s,t}) with p_{s,·} the softmax over the suffix starting at s
("suffix softmax"). Update: θ ← θ + clip(η_u · g, ±0.2) with η_u = max(0.01, 0.05 / √u) at the u-th
update (inverse-square-root decay), I_i += Σ_s p_{s,i}(1 − p_{s,i}); every 50 updates θ is
re-centred to mean 0. Standard error se_i = 1/√I_i.

Locks: the pair a ≻ b is locked when θ_a − z·se_a > θ_b + z·se_b (z = 1), or when b has been
placed below a in two judgements with no judgement the other way; a lock that would close a
cycle among the locks is refused. The final order is a topological order of the locks, ties (no
lock path) broken by θ. Refinement stops when the Top-N order has been the same for ``patience``
(15) consecutive rounds, or after ``max_rounds``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

Judge = Callable[[list[str]], list[str] | None]


@dataclass(frozen=True)
class RefineParams:
    top_n: int = 20
    batch: int = 5
    eta: float = 0.05
    eta_min: float = 0.01
    clip: float = 0.2
    recentre_every: int = 50
    z: float = 1.0
    confirmations: int = 2
    patience: int = 15
    max_rounds: int = 200
    seed: int = 0


@dataclass
class RefineState:
    items: list[str]
    theta: np.ndarray
    fisher: np.ndarray
    updates: int = 0
    wins: dict[tuple[int, int], int] = field(default_factory=dict)
    locks: set[tuple[int, int]] = field(default_factory=set)

    @classmethod
    def start(cls, items: Sequence[str], prior: Sequence[float] | None = None) -> RefineState:
        theta = np.zeros(len(items)) if prior is None else np.asarray(prior, dtype=np.float64) - np.mean(prior)
        return cls(list(items), theta, np.full(len(items), 1e-9))

    @property
    def se(self) -> np.ndarray:
        return 1.0 / np.sqrt(self.fisher)


def suffix_softmax_step(theta: np.ndarray, order: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the PL log-likelihood of ``order`` (indices, best first) and the Fisher increments."""
    grad = np.zeros_like(theta)
    info = np.zeros_like(theta)
    order = list(order)
    for s in range(len(order) - 1):  # the last suffix has one item: p = 1, no information
        suffix = order[s:]
        logits = theta[suffix] - theta[suffix].max()
        p = np.exp(logits) / np.exp(logits).sum()
        grad[suffix] -= p
        grad[order[s]] += 1.0
        info[suffix] += p * (1.0 - p)
    return grad, info


def _reaches(locks: set[tuple[int, int]], start: int, goal: int) -> bool:
    stack, seen = [start], {start}
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for a, b in locks:
            if a == node and b not in seen:
                seen.add(b)
                stack.append(b)
    return False


def try_lock(state: RefineState, winner: int, loser: int) -> bool:
    """Add winner ≻ loser unless already there or it would close a cycle (loser already reaches winner)."""
    if (winner, loser) in state.locks or _reaches(state.locks, loser, winner):
        return False
    state.locks.add((winner, loser))
    return True


def observe(state: RefineState, order: Sequence[int], p: RefineParams) -> None:
    """One listwise judgement: PL update, Fisher information, confirmations and locks."""
    grad, info = suffix_softmax_step(state.theta, order)
    state.updates += 1
    eta = max(p.eta_min, p.eta / np.sqrt(state.updates))
    state.theta += np.clip(eta * grad, -p.clip, p.clip)
    state.fisher += info
    if state.updates % p.recentre_every == 0:
        state.theta -= state.theta.mean()
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            state.wins[(a, b)] = state.wins.get((a, b), 0) + 1
    se = state.se
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            confirmed = state.wins.get((a, b), 0) >= p.confirmations and not state.wins.get((b, a), 0)
            separated = state.theta[a] - p.z * se[a] > state.theta[b] + p.z * se[b]
            if confirmed or separated:
                try_lock(state, a, b)
            elif state.theta[b] - p.z * se[b] > state.theta[a] + p.z * se[a]:
                try_lock(state, b, a)


def final_order(state: RefineState) -> list[int]:
    """Topological order of the locks (Kahn), choosing among the free items the highest θ."""
    n = len(state.items)
    incoming = np.zeros(n, dtype=np.int64)
    for _, b in state.locks:
        incoming[b] += 1
    free = [i for i in range(n) if incoming[i] == 0]
    order = []
    while free:
        best = max(free, key=lambda i: (state.theta[i], -i))
        free.remove(best)
        order.append(best)
        for a, b in list(state.locks):
            if a == best:
                incoming[b] -= 1
                if incoming[b] == 0:
                    free.append(b)
    return order


def next_batch(state: RefineState, top: list[int], rng: np.random.Generator, size: int) -> list[int]:
    """A batch of the current Top-N: the item with the least information and neighbours around it,
    shuffled (the judge sees a fresh order each time)."""
    n = len(top)
    if n <= size:
        chosen = list(top)
    else:
        weakest = int(np.argmin(state.fisher[top] + rng.random(n) * 1e-9))
        start = min(max(0, weakest - size // 2), n - size)
        window = top[start:start + size]
        swap = int(rng.integers(0, size))  # one random outsider keeps comparisons crossing windows
        outside = [i for i in top if i not in window]
        window[swap] = outside[int(rng.integers(0, len(outside)))]
        chosen = window
    return [chosen[i] for i in rng.permutation(len(chosen))]


@dataclass
class RefineOutcome:
    order: list[str]
    theta: dict[str, float]
    se: dict[str, float | None]  # None where the item's Fisher information is ~0 (no judgement reached it)
    locks: int
    rounds: int
    judgements: int
    failed: int
    stable_stop: bool


def refine(items: Sequence[str], judge: Judge, p: RefineParams, prior: Sequence[float] | None = None) -> RefineOutcome:
    """Refine the order of ``items`` (best first, at most ``top_n``) with listwise judgements."""
    items = list(items)[: p.top_n]
    state = RefineState.start(items, prior)
    rng = np.random.default_rng(p.seed)
    current = final_order(state)
    stable, rounds, judged, failed = 0, 0, 0, 0
    while rounds < p.max_rounds and stable < p.patience and len(items) > 1:
        rounds += 1
        batch = next_batch(state, current, rng, p.batch)
        ranked = judge([items[i] for i in batch])
        if ranked is None:
            failed += 1
        else:
            judged += 1
            index = {items[i]: i for i in batch}
            observe(state, [index[d] for d in ranked], p)
        new = final_order(state)
        stable = stable + 1 if new == current else 0
        current = new
    return RefineOutcome(order=[items[i] for i in current],
                         theta={items[i]: float(state.theta[i]) for i in range(len(items))},
                         se={items[i]: float(state.se[i]) if state.fisher[i] > 1e-6 else None for i in range(len(items))},
                         locks=len(state.locks), rounds=rounds, judgements=judged, failed=failed,
                         stable_stop=stable >= p.patience)
