"""A large graded JSON file decoded by two processes, one half each, into the columns of the whole.

Decoding (:mod:`ragdiag.data.graded_rows`) and turning the rows into columns
(:func:`ragdiag.data.graded_columns.row_columns`) hold the GIL, so a second thread cannot share them.
On Linux with two usable CPUs, one of them idle, a file of at least ``SPLIT_MIN_BYTES`` is cut between
two records near its middle; a forked child decodes the second half and sends its columns down a pipe (pickled) while
this process decodes the first, and the two are joined (:func:`ragdiag.data.graded_columns.joined_columns`).

The cut is checked, not trusted: it is taken where the bytes read ``}``, a comma and ``{`` (a JSON list)
or at a line end (JSON lines), and each half must decode on its own — ``[`` the first records ``]`` and
``[`` the rest. A cut inside a string or inside a record leaves a half malformed; then, as when the
child fails in any way, the whole file is decoded here, as without the split. Both ways give the same
columns; a file that is not well-formed is always decoded whole, so its error is the same.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import re
import signal
import sys
import warnings
from collections.abc import Callable

import msgspec

from ragdiag.data.graded_columns import RowColumns, joined_columns, row_columns
from ragdiag.data.graded_rows import JSON_LIST_START, ROW_DECODER, ROWS_DECODER, GradedRow, decode_graded_rows

SPLIT_MIN_BYTES = 64 << 20  # below this the fork and the copies of the halves cost more than they save
_RECORD_BOUNDARY = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")

Half = Callable[[], bytes | memoryview]  # makes the bytes of a half when called (in the process that decodes it)


def graded_columns(data: bytes | mmap.mmap) -> RowColumns | None:
    """The columns of a JSON list (or JSON-lines) graded file's bytes, decoded in two halves by two
    processes when the file is large and two CPUs are usable; None when they are not well-formed graded
    records (:func:`ragdiag.data.graded_rows.decode_graded_rows`)."""
    halves = _halves(data) if len(data) >= SPLIT_MIN_BYTES and _two_cpus() and _a_cpu_idle() else None
    if halves is not None:
        columns = _decoded_in_two(*halves)
        if columns is not None:
            return columns
    rows = decode_graded_rows(data)
    return None if rows is None else row_columns(rows)


def _two_cpus() -> bool:
    """Linux (fork is safe there for this child: it runs msgspec, numpy without BLAS, and pickle) with
    at least two CPUs this process may run on."""
    return sys.platform == "linux" and hasattr(os, "fork") and len(os.sched_getaffinity(0)) >= 2


def _a_cpu_idle() -> bool:
    """Whether the 1-minute load average, which counts this process, leaves a CPU idle: on a machine busy
    with other work the child only takes turns with it, and the split costs more CPU than it saves time
    (the halves' copies, the pickled columns, two decoders sharing the caches)."""
    return os.getloadavg()[0] < len(os.sched_getaffinity(0))


def _halves(data: bytes | mmap.mmap) -> tuple[Half, Half, bool] | None:
    """The two halves of ``data`` cut between two records after its middle, and whether they are JSON
    lines; None when there is no such place."""
    view, middle = memoryview(data), len(data) // 2
    if JSON_LIST_START.match(data):
        cut = _RECORD_BOUNDARY.search(data, middle)
        if cut is None:
            return None
        end, start = cut.start() + 1, cut.end() - 1  # the first half's last "}", the second half's first "{"
        return (lambda: b"".join((view[:end], b"]"))), (lambda: b"".join((b"[", view[start:]))), False
    line_end = data.find(b"\n", middle)
    if line_end < 0:
        return None
    return (lambda: view[:line_end]), (lambda: view[line_end + 1 :]), True


def _decoded(half: bytes | memoryview, lines: bool) -> RowColumns | None:
    """The columns of one half; None when it does not decode as graded records."""
    try:
        rows: list[GradedRow] = ROW_DECODER.decode_lines(half) if lines else ROWS_DECODER.decode(half)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return row_columns(rows) if rows else None


def _decoded_in_two(first: Half, second: Half, lines: bool) -> RowColumns | None:
    """The joined columns of the halves, ``second`` decoded by a forked child; None when either fails."""
    read_end, write_end = os.pipe()
    try:
        with warnings.catch_warnings():  # Python ≥ 3.12 warns on fork in a process with threads (numpy's BLAS pool)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:  # no process to be had (limits, memory): decode the whole file here
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: the second half's columns down the pipe, then out (no cleanup, no output)
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(_decoded(second(), lines), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    pipe = os.fdopen(read_end, "rb")
    received = False
    try:
        head = _decoded(first(), lines)
        if head is not None:
            payload, received = pipe.read(), True
    finally:
        pipe.close()
        if not received:  # the first half failed, or an interrupt: the child's work is not needed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    if not received or status != 0 or head is None:
        return None
    tail = pickle.loads(payload)  # our own child's columns
    return None if tail is None else joined_columns(head, tail)
