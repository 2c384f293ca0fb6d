"""What a golden comparison compares: ragdiag's numbers and fields, never its surroundings.

:func:`comparable` drops, at any depth, the run record and every field that records dependency
versions, the host, the interpreter or timings, writes the local test servers' ports as PORT and a
path under a ``shared/data`` folder from that folder on, and wraps every float in :class:`Close`, which
equals another float within :data:`REL_TOL` (relative; :data:`ABS_TOL` near zero; values computed in
float32, such as embedding scores, within :data:`FLOAT32_REL_TOL`): another CPU's last
bit (numpy's vectorised ``power`` behind the α grid, a BLAS sum order) changes nothing, while counts,
ids, strings and booleans stay exact. :func:`same_text` does the same for a text golden (a table, a
CSV): its numbers with a decimal point or an exponent are compared as floats, everything else exactly.
Every golden test compares through them (``tests/test_golden_comparisons.py`` checks that, that a
version bump or another host changes nothing, and that one ulp on every float of every golden file
changes nothing either).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

REL_TOL = 1e-9  # relative: far above a last-bit difference (2.2e-16), far below any change a test means
FLOAT32_REL_TOL = 1e-5  # values computed in float32 (embedding scores): a few float32 ulps (6e-8 each) of
#                         another summation order (BLAS threads, SIMD width), still far below a real change
ABS_TOL = 1e-15  # for values that are 0 on one machine and a rounding residue on another

# The run record (when, where, with which versions a file was made) and its loose relatives.
RUN_RECORD_KEYS = frozenset({"run_record", "versions", "ragdiag_version", "ragdiag", "python", "platform", "host",
                             "hostname", "argv", "cwd"})
# Timing fields: they change from run to run.
TIMING_KEYS = frozenset({"seconds", "elapsed_s", "duration_s", "started", "finished", "created"})
VOLATILE = RUN_RECORD_KEYS | TIMING_KEYS
LOCAL_SERVER = re.compile(r"http://127\.0\.0\.1:\d+")
SHARED_DATA = re.compile(r"^/.*?/shared/data/")


class Close:
    """A float that equals another within :data:`REL_TOL` (or :data:`ABS_TOL`); NaN equals NaN; never an int."""

    __slots__ = ("rel_tol", "value")

    def __init__(self, value: float, rel_tol: float = REL_TOL) -> None:
        self.value, self.rel_tol = value, rel_tol

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):  # 3.0 written as 3: equal, exactly
            return self.value == other
        if isinstance(other, float):
            other = Close(other)
        if not isinstance(other, Close):
            return NotImplemented
        a, b = self.value, other.value
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=max(self.rel_tol, other.rel_tol), abs_tol=ABS_TOL)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{self.value!r}"


def comparable(doc: Any, extra: Iterable[str] = (), rel_tol: float = REL_TOL) -> Any:
    """``doc`` without :data:`VOLATILE` keys (and ``extra`` ones) at any depth, ports written as PORT,
    floats as :class:`Close` within ``rel_tol`` (ints, strings and booleans exact)."""
    drop = VOLATILE | frozenset(extra)
    if isinstance(doc, dict):
        return {k: comparable(v, drop, rel_tol) for k, v in doc.items() if k not in drop}
    if isinstance(doc, list):
        return [comparable(v, drop, rel_tol) for v in doc]
    if isinstance(doc, str):
        return SHARED_DATA.sub("shared/data/", LOCAL_SERVER.sub("http://127.0.0.1:PORT", doc))
    if isinstance(doc, float):
        return Close(doc, rel_tol)
    return doc


def key_order(doc: Any) -> Any:
    """The keys of every object in ``doc``, in order, at any depth (what a golden's key order is)."""
    if isinstance(doc, dict):
        return [(k, key_order(v)) for k, v in doc.items()]
    if isinstance(doc, list):
        return [key_order(v) for v in doc]
    return None


# a float standing alone (not part of a version, an address or a word): 0.25, -1e-05, 3.5E+2
FLOAT_TOKEN = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d+|\d+(?:\.\d+)?[eE][-+]?\d+)(?![\w.])")
_RUNS = re.compile(r"([^\w])\1+")  # rules and padding, never digits or letters


def _text_tokens(text: str) -> list[Any]:
    """Floats as :class:`Close`; the text between them without whitespace and with runs of one character
    as one when not a letter or digit (a wider number widens its table's padding and rules, nothing else)."""
    parts: list[Any] = []
    at = 0
    for match in FLOAT_TOKEN.finditer(text):
        parts += [_RUNS.sub(r"\1", "".join(text[at:match.start()].split())), Close(float(match.group()))]
        at = match.end()
    return [*parts, _RUNS.sub(r"\1", "".join(text[at:].split()))]


def same_text(new: str, old: str) -> bool:
    """Two texts (a table, a CSV) equal but for floats within tolerance and the layout around them."""
    return _text_tokens(new) == _text_tokens(old)
