"""Tamper with one field of a result document, for the report's wrong-shape tests."""

from __future__ import annotations

from typing import Any


def set_field(doc: Any, path: list, value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced by ``value`` (deleted when ``value`` is ``KeyError``)."""
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc
