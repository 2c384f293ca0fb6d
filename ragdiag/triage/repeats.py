"""Repeats of ``ragdiag triage`` (``--repeats N``): the same generation or grading asked again as another
sample, and the judge consistency check.

Repeat r of a request is the request with ``repeat = r`` and the sampling seed ``--seed + r``
(:class:`RepeatClient`): another cache key, so a repeat is a real call (and, at a temperature above 0,
another sample: a fixed seed would return the same one), while repeat 0 is today's request and keeps
its cache key. A fix counts only when it holds on every repeat (:func:`ragdiag.triage.smallest.holds`).

The judge consistency check, before a failure is laid on the generator: the failing baseline answer
re-graded on repeats 1..max(N−1, 1), and each reference (the ideal answer without ``--answers``) graded
as the candidate against itself on repeats 0..N−1. The judge is *consistent* when every re-grade keeps
the first verdict (wrong stays wrong) and every reference is graded right; otherwise the cause is
``judge``.
"""

from __future__ import annotations

from typing import Any

REPEATS_RANGE = (1, 20)
REFERENCE = "judge-check:reference"  # the passage slot of a reference graded as the candidate (never a passage)


class RepeatClient:
    """A client view that asks every request as repeat ``r`` (``repeat`` = r, seed + r; r = 0: unchanged)."""

    def __init__(self, client: Any, repeat: int) -> None:
        self._client, self.repeat = client, repeat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The client's request, as repeat ``r`` (the cache key and the seed sent both change when r > 0)."""
        request: dict[str, Any] = self._client.request(*args, **kwargs)
        if self.repeat == 0:
            return request
        params = dict(request.get("params", {}))
        params["seed"] = (params.get("seed") or 0) + self.repeat
        return {**request, "params": params, "repeat": self.repeat}


def regrade_repeats(repeats: int) -> range:
    """The repeats on which the failing answer is graded again: 1..max(N−1, 1)."""
    return range(1, max(repeats, 2))


def consistent(first: float | None, regrades: list[float | None], reference_grades: list[float | None],
               fail_below: float) -> bool:
    """Every re-grade keeps the first verdict and every reference is graded right."""
    verdict = first is not None and first >= fail_below
    same = all(g is not None and (g >= fail_below) == verdict for g in regrades)
    return same and all(g is not None and g >= fail_below for g in reference_grades)


def flaky_baseline(grades: list[float | None], answers: list[str | None], fail_below: float) -> str | None:
    """The baseline's repeats disagree (one right, one wrong): ``judge`` when every answer is the same text,
    else ``generator``; None when they agree."""
    verdicts = {g is not None and g >= fail_below for g in grades}
    if len(verdicts) < 2:
        return None
    return "judge" if len(set(answers)) == 1 else "generator"
