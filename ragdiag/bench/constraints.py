"""Constrained selection of operating points (paper 000 Fig. 11): ``--require 'recall>=0.9'``.

A constraint is ``NAME OP NUMBER`` with OP one of ``>= <= > <``, parsed by a regular expression
(never evaluated as code). Names: ``recall`` (average recall), ``R<δ>`` (Robustness-δ@K, e.g.
``R0.3``), ``qps`` (batch QPS, median), ``p50``/``p95``/``p99`` (single-query latency, ms),
``zero`` (queries with recall 0), ``build_s`` (build seconds), ``mib`` (index size, MiB).
A point passes when it meets every constraint; a metric the point does not have (speed of a
labelled run) fails. When no point passes, the binding constraints are those whose removal alone
lets some point pass; if none does, the points failing the fewest constraints are named.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from ragdiag.errors import RagdiagError

_PATTERN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.]*)\s*(>=|<=|>|<)\s*([^\s<>=]+)\s*$")
_OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_FIXED = {
    "recall": lambda p: p.get("recall_mean"),
    "qps": lambda p: (p.get("qps_batch") or {}).get("median"),
    "p50": lambda p: (p.get("latency_ms") or {}).get("p50"),
    "p95": lambda p: (p.get("latency_ms") or {}).get("p95"),
    "p99": lambda p: (p.get("latency_ms") or {}).get("p99"),
    "zero": lambda p: p.get("zero_recall_queries"),
    "build_s": lambda p: p.get("build_s"),
    "mib": lambda p: None if p.get("index_bytes") is None else p["index_bytes"] / 2**20,
}
NAMES = (*_FIXED, "R<δ>")


@dataclass(frozen=True)
class Constraint:
    text: str
    name: str
    op: str
    bound: float
    delta: float | None = None  # for R<δ>

    def value(self, point: dict) -> float | None:
        if self.delta is not None:
            return point.get("robustness", {}).get(f"{self.delta:g}")
        return _FIXED[self.name](point)

    def holds(self, point: dict) -> bool:
        value = self.value(point)
        return value is not None and _OPS[self.op](value, self.bound)


def parse_constraint(text: str) -> Constraint:
    """``'R0.3>=0.95'`` → Constraint; anything else → one-line RagdiagError naming the option."""
    match = _PATTERN.match(text)
    if not match:
        raise RagdiagError(f"--require '{text}': expected NAME OP NUMBER with OP one of >=, <=, >, < "
                           f"(e.g. 'recall>=0.9', 'R0.3>=0.95', 'qps>=50000')")
    name, op, raw = match.groups()
    try:
        bound = float(raw)
    except ValueError:
        raise RagdiagError(f"--require '{text}': '{raw}' is not a number") from None
    if not math.isfinite(bound):
        raise RagdiagError(f"--require '{text}': the bound must be a finite number, got {raw}")
    if name in _FIXED:
        return Constraint(text.strip(), name, op, bound)
    if name.startswith("R") and len(name) > 1:
        try:
            delta = float(name[1:])
        except ValueError:
            delta = math.nan
        if not 0 < delta <= 1:
            raise RagdiagError(f"--require '{text}': in '{name}' δ must be a number in (0, 1], e.g. R0.3")
        return Constraint(text.strip(), name, op, bound, delta)
    raise RagdiagError(f"--require '{text}': unknown name '{name}' (expected one of {', '.join(NAMES)})")


def required_deltas(constraints: list[Constraint]) -> tuple[float, ...]:
    """The δ values the constraints need measured."""
    return tuple(c.delta for c in constraints if c.delta is not None)


def _columns(points: list[dict], constraints: list[Constraint]) -> list[str]:
    """The metric names not constrained, in table order."""
    deltas = list(points[0].get("robustness", {})) if points else []
    taken = {c.name for c in constraints} | {f"R{c.delta:g}" for c in constraints if c.delta is not None}
    names = ["recall", *[f"R{d}" for d in deltas], "zero", "qps", "p50", "p99", "build_s", "mib"]
    return [n for n in names if n not in taken]


def _metric(point: dict, name: str) -> float | None:
    if name.startswith("R") and name not in _FIXED:
        return point.get("robustness", {}).get(name[1:])
    return _FIXED[name](point)


def select(points: list[dict], constraints: list[Constraint], labels: list[str]) -> dict:
    """Which points meet every constraint, their unconstrained metrics, or what binds when none does."""
    fails = [[c.text for c in constraints if not c.holds(p)] for p in points]
    passing = [i for i, f in enumerate(fails) if not f]
    shown = _columns(points, constraints)
    out: dict = {"constraints": [c.text for c in constraints], "unconstrained": shown,
                 "passing": [{"point": i, "label": labels[i], **{n: _metric(points[i], n) for n in shown}} for i in passing],
                 "satisfied_by": {c.text: sum(c.holds(p) for p in points) for c in constraints}}
    if passing or not points:
        return out
    binding = []
    for c in constraints:
        admitted = [i for i, f in enumerate(fails) if f == [c.text]]
        if admitted:
            others = [points[i] for i in admitted]
            best = max if c.op in (">=", ">") else min
            reached = best(v for v in (c.value(p) for p in others) if v is not None) if any(
                c.value(p) is not None for p in others) else None
            binding.append({"constraint": c.text, "points_admitted_without_it": len(admitted),
                            "best_value_among_them": reached})
    fewest = min(len(f) for f in fails)
    out["binding"] = binding
    out["closest"] = [{"point": i, "label": labels[i], "fails": f} for i, f in enumerate(fails) if len(f) == fewest]
    return out


def binding_line(selection: dict) -> str:
    """One sentence: which constraint binds when no point passes."""
    if selection["passing"]:
        return f"{len(selection['passing'])} operating point(s) meet {' and '.join(selection['constraints'])}"
    if selection.get("binding"):
        parts = [f"'{b['constraint']}' (dropping it admits {b['points_admitted_without_it']} point(s); best value "
                 f"among them {_short(b['best_value_among_them'])})" for b in selection["binding"]]
        return "no operating point meets every constraint; binding: " + "; ".join(parts)
    closest = "; ".join(f"{c['label']} fails {', '.join(c['fails'])}" for c in selection.get("closest", []))
    return f"no operating point meets every constraint and no single constraint binds alone; closest: {closest}"


def _short(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.4g}"
