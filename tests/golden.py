"""What a golden comparison compares: ragdiag's numbers and fields, never its surroundings.

:func:`comparable` drops, at any depth, the run record and every field that records dependency
versions, the host, the interpreter or timings, writes the local test servers' ports as PORT and a
path under a ``shared/data`` folder from that folder on. Every golden test compares through it
(``tests/test_golden_comparisons.py`` checks that, and that a version bump or another host changes
nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# The run record (when, where, with which versions a file was made) and its loose relatives.
RUN_RECORD_KEYS = frozenset({"run_record", "versions", "ragdiag_version", "ragdiag", "python", "platform", "host",
                             "hostname", "argv", "cwd"})
# Timing fields: they change from run to run.
TIMING_KEYS = frozenset({"seconds", "elapsed_s", "duration_s", "started", "finished", "created"})
VOLATILE = RUN_RECORD_KEYS | TIMING_KEYS
LOCAL_SERVER = re.compile(r"http://127\.0\.0\.1:\d+")
SHARED_DATA = re.compile(r"^/.*?/shared/data/")


def comparable(doc: Any, extra: Iterable[str] = ()) -> Any:
    """``doc`` without :data:`VOLATILE` keys (and ``extra`` ones) at any depth, ports written as PORT."""
    drop = VOLATILE | frozenset(extra)
    if isinstance(doc, dict):
        return {k: comparable(v, drop) for k, v in doc.items() if k not in drop}
    if isinstance(doc, list):
        return [comparable(v, drop) for v in doc]
    if isinstance(doc, str):
        return SHARED_DATA.sub("shared/data/", LOCAL_SERVER.sub("http://127.0.0.1:PORT", doc))
    return doc
