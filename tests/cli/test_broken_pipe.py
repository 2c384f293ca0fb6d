"""``ragdiag compare … | head -1``: a reader that stops early leaves the gate's exit code and prints no
traceback (issue 39: it exited 1, a broken pipe, on a passing gate)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RAGDIAG = Path(sys.executable).parent / "ragdiag"
# One run pair, two margins: the default gate fails it (exit 1), a 0.5 margin passes it (exit 0, a
# 21-line report). The broken-pipe guard sits in the entry point, whatever the inputs; a run pair
# starts ~0.8 s of CPU cheaper than graded files, whose judge interval imports scipy.stats.
FAILING = ["--base", "fixtures/compare/base.jsonl", "--new", "fixtures/compare/new.trec", "--qrels", "fixtures/compare/qrels.tsv"]
PASSING = [*FAILING, "--max-drop", "0.5"]


def _piped(args: list[str], reader: str) -> tuple[int, str]:
    """The exit code of ``ragdiag compare ARGS | READER`` and ragdiag's stderr."""
    if not RAGDIAG.exists():
        pytest.skip("no ragdiag console script beside the interpreter")
    script = f'"{RAGDIAG}" compare {" ".join(args)} 2>"$ERR" | {reader}; exit "${{PIPESTATUS[0]}}"'
    err = ROOT / ".pytest_cache" / f"broken-pipe-{os.getpid()}.err"
    err.parent.mkdir(exist_ok=True)
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env={**os.environ, "ERR": str(err), "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    text = err.read_text()
    err.unlink()
    return done.returncode, text


@pytest.mark.parametrize("reader", ["head -1", "true"])
def test_a_passing_gate_read_by_a_reader_that_stops_early_exits_0_quietly(reader):
    code, stderr = _piped(PASSING, reader)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "Broken pipe" not in stderr and "BrokenPipe" not in stderr


def test_a_failing_gate_keeps_its_exit_1_through_a_closed_pipe():
    code, stderr = _piped(FAILING, "true")
    assert code == 1, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
