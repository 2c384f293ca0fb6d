"""User-facing errors: one clear line naming what is wrong and where, and a non-zero exit."""

from __future__ import annotations


class RagdiagError(Exception):
    """An error caused by the user's input or environment (never a bug).

    The CLI prints ``ragdiag: <kind>: <message>`` on stderr and exits with ``exit_code``; ``kind``
    is ``note`` for an expected stop that says what to do next (a batch still running), not a fault.
    """

    exit_code = 2
    kind = "error"


class DataError(RagdiagError):
    """Malformed or inconsistent input data; the message names file, record and field."""

    @classmethod
    def at(cls, source: str, index: int | None, field: str | None, problem: str) -> DataError:
        """Build the message ``<source>: record <index>: field '<field>': <problem>``."""
        parts = [source]
        if index is not None:
            parts.append(f"record {index}")
        if field is not None:
            parts.append(f"field '{field}'")
        parts.append(problem)
        return cls(": ".join(parts))
