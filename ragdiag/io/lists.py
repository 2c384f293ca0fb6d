"""The comma-separated lists options take: cut-offs K, robustness thresholds δ, names from a closed set
and a pair of names.

One parser each, used by every command and by the typer callbacks that check them before any work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragdiag.errors import RagdiagError

MAX_K = 100_000


def parse_ks(text: str, flag: str = "--k", max_k: int = MAX_K) -> tuple[int, ...]:
    """``"10,20,30"`` → (10, 20, 30): integers in [1, ``max_k``], in the order given, duplicates dropped."""
    try:
        ks = tuple(dict.fromkeys(int(part) for part in str(text).split(",") if part.strip()))
    except ValueError:
        raise RagdiagError(f"{flag}: '{text}': expected comma-separated integers such as 2,3,5") from None
    if not ks or any(not 1 <= k <= max_k for k in ks):
        raise RagdiagError(f"{flag}: '{text}': every K must be a positive integer ≤ {max_k}")
    return ks


def parse_deltas(text: str, flag: str = "--delta") -> tuple[float, ...]:
    """``"0.1,0.3"`` → (0.1, 0.3); each δ of Robustness-δ@K must lie in (0, 1]."""
    try:
        deltas = tuple(float(part) for part in str(text).split(",") if part.strip())
    except ValueError:
        raise RagdiagError(f"{flag}: '{text}': expected comma-separated numbers in (0, 1]") from None
    if not deltas or any(not (math.isfinite(d) and 0 < d <= 1) for d in deltas):
        raise RagdiagError(f"{flag}: '{text}': every δ must be in (0, 1]")
    return deltas


def parse_choices(value: str, allowed: Sequence[str], what: str, flag: str, expected: str | None = None) -> list[str]:
    """``"a,b"`` → ["a", "b"] (order kept, duplicates dropped); every name must be in ``allowed``."""
    names = list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    hint = expected or f"one of {', '.join(allowed)}"
    if not names:
        raise RagdiagError(f"{flag} is empty: expected {hint}")
    for name in names:
        if name not in allowed:
            raise RagdiagError(f"unknown {what} '{name}': expected {hint}")
    return names


def parse_pair(text: str, what: str = "measures", example: str = "T,F") -> tuple[str, str]:
    """``"T,F"`` → ("T", "F"): exactly two names, for a paired comparison."""
    pair = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(pair) != 2:
        raise RagdiagError(f"'{text}': expected two {what} to compare, e.g. {example}")
    return pair


def parse_bounds(text: str, flag: str = "--bounds") -> tuple[float, float]:
    """``"0,1"`` → (0.0, 1.0): two finite numbers, the first below the second."""
    parts = [part.strip() for part in str(text).split(",")]
    try:
        low, high = (float(part) for part in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        low = high = math.nan
    if not (math.isfinite(low) and math.isfinite(high) and low < high and high - low <= 1e12):
        raise RagdiagError(f"{flag}: '{text}': expected LOW,HIGH, two finite numbers with LOW < HIGH (e.g. 0,1 or 1,5)")
    return low, high


def list_callback(parse, flag: str):
    """A typer callback running ``parse`` on the option's text, so a bad list is a one-line usage
    error before any work; the text itself is passed on unchanged."""

    def check(value: str | None) -> str | None:
        if value is None:
            return value
        import typer

        try:
            parse(value, flag)
        except RagdiagError as err:
            raise typer.BadParameter(str(err).removeprefix(f"{flag}: ")) from None
        return value

    return check
