"""α grids for the measures' parameter (METHODS.md §3).

``lN^B``: 0, 1 and, for i = 1..N, both B^i and 1 − B^i, sorted ascending (the paper's
``l350^0.95`` has 702 values). ``a0^a1^step``: a linear grid from a0 to a1 inclusive.
"""

from __future__ import annotations

import numpy as np

from ragdiag.errors import RagdiagError

DEFAULT_GRID = "l350^0.95"


def parse_alpha_grid(spec: str) -> np.ndarray:
    """The sorted, de-duplicated α values of a grid spec, all within [0, 1]."""
    parts = spec.strip().split("^")
    try:
        if len(parts) == 2 and parts[0].startswith("l"):
            count, base = int(parts[0][1:]), float(parts[1])
            if count < 1 or not 0 < base < 1:
                raise ValueError
            powers = [base**i for i in range(1, count + 1)]
            values = [0.0, 1.0, *powers, *(1 - p for p in powers)]
        elif len(parts) == 3:
            start, stop, step = (float(p) for p in parts)
            if step <= 0 or stop < start:
                raise ValueError
            count = int(np.floor((stop - start) / step + 1e-9)) + 1
            values = [start + i * step for i in range(count)]
        else:
            raise ValueError
    except ValueError:
        raise RagdiagError(f"bad --alpha-grid '{spec}': expected lN^B (e.g. l350^0.95) or a0^a1^step (e.g. 0^1^0.01)") from None
    grid = np.unique(np.asarray(values, dtype=np.float64))
    if grid.min() < 0 or grid.max() > 1:
        raise RagdiagError(f"bad --alpha-grid '{spec}': values must lie in [0, 1]")
    return grid
