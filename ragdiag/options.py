"""Parsing of comma-separated option values shared by the commands, with one-line errors."""

from __future__ import annotations

from collections.abc import Sequence

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


def parse_pair(text: str, what: str = "measures", example: str = "T,F") -> tuple[str, str]:
    """``"T,F"`` → ("T", "F"): exactly two names, for a paired comparison."""
    pair = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(pair) != 2:
        raise RagdiagError(f"'{text}': expected two {what} to compare, e.g. {example}")
    return pair  # type: ignore[return-value]
