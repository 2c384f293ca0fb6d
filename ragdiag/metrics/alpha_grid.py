"""α grids for the measures' parameter (docs/methods.md#3-correlation-analysis), built exactly as the paper's released analysis.

- ``lN^B``: 0, 1 and, for i = 1..N, both B^i and 1 − B^i, sorted ascending; the powers are
  ``numpy.logspace(1, N, num=N, base=B)`` (numpy's vectorised power: on some CPUs it differs in
  the last bit from Python's ``B**i``, and that bit changes tie structures). ``l350^0.95`` has 702 values.
- ``a0^a1^step``: ``numpy.arange(a0, a1, step)``, end excluded (``0^1^0.25`` → 0, 0.25, 0.5, 0.75).
- ``ia0^a1^step``: inclusive linear grid, ``numpy.linspace(a0, a1, num=m + 1)`` with m = (a1 − a0)/step,
  which must be a whole number (``i0^1^0.25`` → 0, 0.25, 0.5, 0.75, 1).

Every grid lies in [0, 1] and holds at most :data:`MAX_GRID_SIZE` values.
"""

from __future__ import annotations

import math

import numpy as np

from ragdiag.errors import RagdiagError

DEFAULT_GRID = "l350^0.95"
MAX_GRID_SIZE = 100_000
_SYNTAX = "expected lN^B (e.g. l350^0.95), a0^a1^step (e.g. 0^1^0.01, end excluded) or ia0^a1^step (end included)"


def _bad(spec: str, problem: str = _SYNTAX) -> RagdiagError:
    return RagdiagError(f"bad --alpha-grid '{spec}': {problem}")


def _numbers(spec: str, parts: list[str]) -> tuple[float, float, float]:
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        raise _bad(spec) from None
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise _bad(spec, "a0, a1 and step must be finite numbers")
    if step <= 0:
        raise _bad(spec, f"step must be positive, got {parts[2]}")
    if not 0 <= start <= 1 or not 0 <= stop <= 1:
        raise _bad(spec, "a0 and a1 must lie in [0, 1]")
    if stop < start:
        raise _bad(spec, "a1 must not be below a0")
    return start, stop, step


def _check_size(spec: str, size: float) -> None:
    if size > MAX_GRID_SIZE:
        raise _bad(spec, f"{size:.0f} values exceed the limit of {MAX_GRID_SIZE:,}; use a coarser step")


def _log_grid(spec: str, parts: list[str]) -> np.ndarray:
    try:
        count, base = int(parts[0][1:]), float(parts[1])
    except ValueError:
        raise _bad(spec) from None
    if count < 1:
        raise _bad(spec, f"N must be at least 1, got {count}")
    if not 0 < base < 1:
        raise _bad(spec, f"B must lie strictly between 0 and 1, got {parts[1]}")
    _check_size(spec, 2 * count + 2)
    powers = np.logspace(1, count, num=count, base=base)
    return np.concatenate([[0.0, 1.0], powers, 1 - powers])


def _linear_grid(spec: str, parts: list[str], inclusive: bool) -> np.ndarray:
    start, stop, step = _numbers(spec, parts)
    span = (stop - start) / step
    _check_size(spec, span + 1 if inclusive else math.ceil(span))
    if not inclusive:
        grid = np.arange(start, stop, step)
        if grid.size == 0:
            raise _bad(spec, "the grid is empty (a0 = a1 with the end excluded); use ia0^a1^step to include a1")
        return grid
    steps = round(span)
    if abs(span - steps) > 1e-9 * max(1.0, span):
        raise _bad(spec, f"(a1 − a0)/step = {span:g} is not a whole number of steps")
    return np.linspace(start, stop, num=steps + 1)


def parse_alpha_grid(spec: str) -> np.ndarray:
    """The sorted, de-duplicated α values of a grid spec (module docstring), all within [0, 1]."""
    text = spec.strip()
    parts = text.split("^")
    if len(parts) == 2 and text.startswith("l"):
        values = _log_grid(spec, parts)
    elif len(parts) == 3 and text.startswith("i"):
        values = _linear_grid(spec, [parts[0][1:], *parts[1:]], inclusive=True)
    elif len(parts) == 3:
        values = _linear_grid(spec, parts, inclusive=False)
    else:
        raise _bad(spec)
    return np.unique(values)
