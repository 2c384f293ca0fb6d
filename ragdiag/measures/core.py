"""A measure as a value with typed parameters, in the style of ir_measures (MacAvaney et al., ECIR 2022).

A :class:`Measure` is a family (``nDCG``, ``ra_nwg``, ``F``): its name as users type it, report label,
direction, one-line description, typed parameters and the function computing it. Binding values to
its parameters gives a :class:`BoundMeasure` — ``nDCG@10`` is ``nDCG @ 10``, ``F(alpha=0.5)`` is
``F(alpha=0.5)`` — whose ``str`` is the spelling :func:`parse_bound` reads back.

The implementation is what computes the measure: every command asks :meth:`Measure.compute` for it.
Its calling convention is the set's (ir_measures' providers, one per kind of input):

- correlate (:data:`ragdiag.measures.registry.CORRELATE`): ``f(*columns, a)`` on the per-row columns the
  measure ``reads`` (float64 arrays of ``n``, ``k``, ``np_``, ``s``, ``ndcg``; see
  :mod:`ragdiag.metrics.measure_tables`), ``a`` the α grid as a column (only for a measure over α);
  one value per row (per α and row);
- evaluate (:data:`ragdiag.measures.registry.EVALUATE`): ``f(run, ks, settings)`` on a
  :class:`ragdiag.measures.scoring.JudgedRun` → per-query values, shape (len(ks), queries); a measure
  that ``reads`` trec_eval measures (``"recall.{ks}"``) finds their per-query columns in ``run.trec_eval``.

Import-light (no numpy): ``ragdiag --help`` imports it; an implementation is imported when called.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import Any, Literal, Union

from ragdiag.errors import RagdiagError

Direction = Literal["higher", "lower"]
HIGHER: Direction = "higher"
LOWER: Direction = "lower"
ParamValue = Union[int, float]


@dataclass(frozen=True)
class Param:
    """A typed parameter of a measure family: its name, type, the option that sets it and what it means."""

    name: str
    type: type[int] | type[float]
    option: str
    help: str

    def cast(self, text: str) -> ParamValue:
        """``"3"`` → 3 (an ``int`` parameter) or 3.0 (a ``float`` one); a one-line error otherwise."""
        try:
            return self.type(text)
        except ValueError:
            raise RagdiagError(f"parameter {self.name}: '{text}' is not {'an integer' if self.type is int else 'a number'}") \
                from None


CUTOFF = Param("cutoff", int, "--k", "K, the rank cut-off: only the top K passages count")
ALPHA = Param("alpha", float, "--alpha-grid", "α in [0, 1], maximised over the α grid")
XK = Param("xk", float, "--xk", "x: Np is estimated from the positives in the top round(x·K)")
GOLD = Param("gold", int, "--gold", "a passage is relevant when its grade is ≥ gold")
POOL_DEPTH = Param("pool_depth", int, "--pool-depth", "depth of the run's pool the oracle may reorder")
HARM_MAX = Param("harm_max", int, "--harm-max", "a passage with grade ≤ harm-max is harmful")
RARITY = Param("rarity", float, "--alpha", "rarity exponent of RA-nWG's weights (with --cap4/--cap3/--fallback4/--fallback3)")
PERCENTILE = Param("q", int, "", "the percentile of the per-query recalls")


@dataclass(frozen=True)
class Reading:
    """What a measure is in plain words, and what to raise to raise it (correlate's guide): at α ≤ 0.05, in
    between (or without α), at α ≥ 0.95; each a (meaning, lever) pair."""

    low: tuple[str, str]
    middle: tuple[str, str]
    high: tuple[str, str]

    @classmethod
    def always(cls, meaning: str, lever: str) -> Reading:
        return cls((meaning, lever), (meaning, lever), (meaning, lever))

    def at(self, alpha: float | None) -> tuple[str, str]:
        if alpha is not None and alpha <= 0.05:
            return self.low
        return self.high if alpha is not None and alpha >= 0.95 else self.middle


@dataclass(frozen=True)
class Measure:
    """One measure family. ``implementation`` is ``"module:function"`` (imported by :meth:`compute`) or the
    function itself; ``reads`` names its inputs (correlate: the row columns; evaluate: trec_eval measures)."""

    name: str
    label: str
    direction: Direction
    description: str
    params: tuple[Param, ...]
    implementation: str | Callable[..., Any]
    legend: str = ""  # the line under a verdict (correlate)
    choice_note: str = ""  # said beside the name in the option's help
    kind: str = ""  # evaluate: "graded" (graded_utility) or "standard" (trec_eval / measures.dcg)
    long_label: str = ""  # a plot's axis label when it says more than ``label``
    reads: tuple[str, ...] = ()  # correlate: the row columns, in the implementation's argument order
    reading: Reading | None = None  # correlate's guide: the measure in plain words at the best α

    @property
    def lower_is_better(self) -> bool:
        return self.direction == LOWER

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def over_alpha(self) -> bool:
        return "alpha" in self.param_names

    @property
    def options(self) -> tuple[str, ...]:
        """The options whose values change the measure, besides ``--k``."""
        return tuple(p.option for p in self.params if p is not CUTOFF and p.option)

    @property
    def plot_label(self) -> str:
        return self.long_label or self.label

    def compute(self) -> Callable[..., Any]:
        """The function computing this measure (imported now: implementations need numpy)."""
        if callable(self.implementation):
            return self.implementation
        module, _, function = self.implementation.partition(":")
        found: Callable[..., Any] = getattr(import_module(module), function)
        return found

    def relabelled(self, label: str, long_label: str = "") -> Measure:
        """The same measure shown under another label (a command whose tables say it differently)."""
        return replace(self, label=label, long_label=long_label)

    def __matmul__(self, cutoff: int) -> BoundMeasure:
        """``nDCG @ 10``: the measure at rank cut-off 10 (ir_measures' ``nDCG@10``)."""
        return self.bind(cutoff=cutoff)

    def __call__(self, **values: ParamValue) -> BoundMeasure:
        """``F(alpha=0.5)``: the measure with these parameter values (ir_measures' ``P(rel=2)``)."""
        return self.bind(**values)

    def bind(self, **values: ParamValue) -> BoundMeasure:
        """The measure with parameter values, each checked against its declared type."""
        known = {p.name: p for p in self.params}
        for name, value in values.items():
            param = known.get(name)
            if param is None:
                raise RagdiagError(f"{self.name} has no parameter {name!r}: it takes {', '.join(known) or 'none'}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    (param.type is int and not isinstance(value, int)):
                raise RagdiagError(f"{self.name}: parameter {name} must be {'an integer' if param.type is int else 'a number'}")
        cutoff = values.get("cutoff")
        rest = tuple((p.name, values[p.name]) for p in self.params if p.name in values and p.name != "cutoff")
        return BoundMeasure(self, int(cutoff) if cutoff is not None else None, rest)


@dataclass(frozen=True)
class BoundMeasure:
    """A measure with values for (some of) its parameters: ``ra_nwg@10``, ``F(alpha=0.5)``."""

    measure: Measure
    cutoff: int | None = None
    values: tuple[tuple[str, ParamValue], ...] = field(default=())

    @property
    def name(self) -> str:
        return self.measure.name

    @property
    def label(self) -> str:
        """The report label: ``RA-nWG@10``."""
        return self.measure.label + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def __matmul__(self, cutoff: int) -> BoundMeasure:
        """``F(alpha=0.5) @ 10``: the same values at rank cut-off 10."""
        return self.measure.bind(**dict(self.values), cutoff=cutoff)

    def __str__(self) -> str:
        args = ",".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in self.values)
        return self.name + (f"({args})" if args else "") + (f"@{self.cutoff}" if self.cutoff is not None else "")


_BOUND = re.compile(r"^(?P<name>[^()@]+?)(?:\((?P<args>[^()]*)\))?(?:@(?P<cutoff>[^@]*))?$")


def parse_bound(text: str, families: dict[str, Measure]) -> BoundMeasure:
    """``"ndcg@10"`` / ``"F(alpha=0.5)"`` → the bound measure of a family in ``families``; the inverse of ``str``."""
    found = _BOUND.match(text.strip())
    if not found or found["name"] not in families:
        raise RagdiagError(f"unknown measure '{text}': expected one of {', '.join(families)}")
    family = families[found["name"]]
    values: dict[str, ParamValue] = {}
    params = {p.name: p for p in family.params}
    for part in filter(None, (found["args"] or "").split(",")):
        name, eq, raw = part.partition("=")
        if not eq or name.strip() not in params:
            raise RagdiagError(f"'{text}': {family.name} takes {', '.join(params) or 'no parameters'}")
        values[name.strip()] = params[name.strip()].cast(raw.strip())
    if found["cutoff"] is not None:
        if "cutoff" not in params or not found["cutoff"].isdigit() or int(found["cutoff"]) < 1:
            raise RagdiagError(f"'{text}': {family.name}@K needs a whole K ≥ 1")
        values["cutoff"] = int(found["cutoff"])
    return family.bind(**values)
