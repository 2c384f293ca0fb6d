"""Optional result fields as the renderers need them: present (or one clear error naming the field),
and numbers with gaps as matplotlib draws them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypeVar

from ragdiag.errors import DataError

T = TypeVar("T")


def required(value: T | None, source: str, name: str) -> T:
    """``value``; a :class:`DataError` ``<source>: field '<name>': missing …`` when the result lacks
    it (a file written by another version, or edited), where the renderer would otherwise crash."""
    if value is None:
        raise DataError.at(source, None, name, "missing: the report needs it")
    return value


def gaps(values: Iterable[float | None]) -> list[float]:
    """``None`` → NaN: the conversion matplotlib applies to a list holding None (a gap in a line, no
    marker), done before the call so the values are numbers."""
    return [math.nan if v is None else v for v in values]
