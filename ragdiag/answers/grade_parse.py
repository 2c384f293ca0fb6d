"""Strict parsing of judge replies: a JSON object with an integer ``grade`` 1–5, or a bare digit.

Accepted: ``{"grade": 4, "reason": "..."}`` (optionally inside a ```json fence), ``4``, ``4.``.
Everything else (``{}``, ``"I'd say four out of five"``, a grade outside 1–5 or not whole, a
non-finite number such as ``NaN``, ``Infinity`` or ``1e400``, prose around JSON) holds no grade: the caller retries once with a repair instruction, then records the grade as
missing with the reply. There is no default grade.
"""

from __future__ import annotations

import json
import math
import re

_BARE_DIGIT = re.compile(r"^\s*([1-5])\s*\.?\s*$")
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


def parse_grade(reply: str) -> int | None:
    """The grade in ``reply`` (1–5) or None when the reply holds no valid grade."""
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    bare = _BARE_DIGIT.match(text)
    if bare:
        return int(bare.group(1))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, and ints over Python's digit limit
        return None
    grade = data.get("grade") if isinstance(data, dict) else None
    if isinstance(grade, bool) or not isinstance(grade, (int, float)):
        return None
    if isinstance(grade, float) and not math.isfinite(grade):
        return None
    if not 1 <= grade <= 5 or grade != int(grade):
        return None
    return int(grade)
