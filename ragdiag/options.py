"""Parsing of comma-separated option values shared by the commands, with one-line errors."""

from __future__ import annotations

from typing import Sequence

from ragdiag.errors import RagdiagError


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


def parse_deltas(text: str, flag: str = "--delta") -> tuple[float, ...]:
    """``"0.1,0.3"`` → (0.1, 0.3); each δ of Robustness-δ@K must lie in (0, 1]."""
    try:
        deltas = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise RagdiagError(f"{flag} '{text}': expected comma-separated numbers") from None
    if not deltas or any(not 0 < d <= 1 for d in deltas):
        raise RagdiagError(f"{flag} '{text}': every δ must be in (0, 1]")
    return deltas


def parse_pair(text: str, what: str = "measures", example: str = "T,F") -> tuple[str, str]:
    """``"T,F"`` → ("T", "F"): exactly two names, for a paired comparison."""
    pair = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(pair) != 2:
        raise RagdiagError(f"'{text}': expected two {what} to compare, e.g. {example}")
    return pair  # type: ignore[return-value]
