"""Issue 39: the first embedding line came after minutes (one per finished batch); a line now comes at
least every ``every`` seconds while one long step runs, and a model load says it is still loading."""

from __future__ import annotations

import io
import time

from ragdiag.io.progress import LineProgress, waiting


def test_a_line_comes_while_one_long_step_runs_without_any_advance():
    stream = io.StringIO()
    lines = LineProgress("embedding", 10, every=0.05, stream=stream)
    lines.start_ticker()
    time.sleep(0.3)  # one long batch: nothing counted yet
    lines.close()
    printed = stream.getvalue().splitlines()
    assert len(printed) >= 3 and printed[0] == "embedding: 0/10 (0%), 0.0/s, ETA ?"


def test_a_short_step_stays_silent():
    stream = io.StringIO()
    lines = LineProgress("embedding", 10, every=5.0, stream=stream)
    lines.start_ticker()
    lines.advance(10)
    lines.close()
    assert stream.getvalue() == ""


def test_a_model_load_says_it_is_still_loading():
    stream = io.StringIO()
    with waiting("loading model st:x on cpu", every=0.05, stream=stream):
        time.sleep(0.2)
    printed = stream.getvalue().splitlines()
    assert printed[0] == "ragdiag: note: loading model st:x on cpu …"
    assert len(printed) >= 3 and printed[1].startswith("ragdiag: note: still loading model st:x on cpu (")
