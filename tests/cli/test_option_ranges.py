"""Issue 9, option values: every bad value is refused before any work, on one stderr line that
names the flag and the problem, exit 2, no traceback, nothing written."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

# click < 8.2 mixes stderr into stdout unless told not to
runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()

LLM = ["--answers", "answers.jsonl", "--out", "graded.json"]  # grade: inputs are never read on a usage error
GEN = ["--texts", "texts.json", "--ranked", "ranked.json", "--out", "answers.jsonl"]
CORR = ["--graded", "graded.json"]
RET = ["--index-dir", "idx", "--queries", "queries.jsonl", "--out", "run.jsonl"]
ROB = ["--base-vectors", "base.npy", "--query-vectors", "queries.npy", "--out", "rob.json"]
PIPE = ["--texts", "texts.json", "--ranked", "ranked.json", "--out-dir", "out"]

CASES = [
    # LLM options (grade, generate, pipeline share them)
    (["grade", *LLM, "--temperature", "nan"], "--temperature", "not a finite number"),
    (["grade", *LLM, "--temperature", "inf"], "--temperature", "not a finite number"),
    (["grade", *LLM, "--temperature", "2.5"], "--temperature", "out of range"),
    (["grade", *LLM, "--timeout", "-5"], "--timeout", "out of range"),
    (["grade", *LLM, "--timeout", "0"], "--timeout", "out of range"),
    (["grade", *LLM, "--timeout", "nan"], "--timeout", "not a finite number"),
    (["grade", *LLM, "--max-retries", "-1"], "--max-retries", "out of range"),
    (["grade", *LLM, "--rpm", "0"], "--rpm", "out of range"),
    (["grade", *LLM, "--tpm", "-10"], "--tpm", "out of range"),
    (["grade", *LLM, "--workers", "0"], "--workers", "out of range"),
    (["grade", *LLM, "--repeats", "0"], "--repeats", "out of range"),
    (["grade", *LLM, "--min-coverage", "-1"], "--min-coverage", "out of range"),
    (["grade", *LLM, "--min-coverage", "nan"], "--min-coverage", "not a finite number"),
    (["grade", *LLM, "--min-coverage", "2"], "--min-coverage", "out of range"),
    (["grade", *LLM, "--seed", "-1"], "--seed", "out of range"),
    (["grade", *LLM, "--cache", "sometimes"], "--cache", "is not one of"),
    (["grade", *LLM, "--model", ""], "--model", "must name a chat model (e.g. gpt-4o-mini), got an empty name"),
    (["grade", *LLM, "--model", "  "], "--model", "got an empty name"),
    (["generate", *GEN, "--model", ""], "--model", "got an empty name"),
    (["pipeline", *PIPE, "--model", ""], "--model", "got an empty name"),
    (["generate", *GEN, "--temperature", "nan"], "--temperature", "not a finite number"),
    (["generate", *GEN, "--ks", "0,2"], "--ks", "positive integer"),
    (["generate", *GEN, "--ks", "two"], "--ks", "comma-separated integers"),
    (["generate", *GEN, "--dataset", "squad"], "--dataset", "is not one of"),
    (["pipeline", *PIPE, "--min-samples", "0"], "--min-samples", "out of range"),
    (["pipeline", *PIPE, "--rpm", "0"], "--rpm", "out of range"),
    # correlate
    (["correlate", *CORR, "--xk", "nan"], "--xk", "not a finite number"),
    (["correlate", *CORR, "--xk", "0"], "--xk", "out of range"),
    (["correlate", *CORR, "--xk", "-1"], "--xk", "out of range"),
    (["correlate", *CORR, "--min-samples", "0"], "--min-samples", "out of range"),
    (["correlate", *CORR, "--bootstrap", "-1"], "--bootstrap", "out of range"),
    (["correlate", *CORR, "--alpha-grid", "0^1^1e-9"], "--alpha-grid", "100,000"),
    (["correlate", *CORR, "--alpha-grid", "0^inf^1"], "--alpha-grid", "finite"),
    (["correlate", *CORR, "--alpha-grid", "l0^0.95"], "--alpha-grid", "N must be at least 1"),
    (["correlate", *CORR, "--delta", "0,0.5"], "--delta", "(0, 1]"),
    (["correlate", *CORR, "--delta", "nan"], "--delta", "(0, 1]"),
    (["correlate", *CORR, "--compare", "T,F,E"], "--compare", "expected two"),
    # retrieval and robustness
    (["retrieve", *RET, "--rrf-k", "-60"], "--rrf-k", "out of range"),
    (["retrieve", *RET, "--k", "0"], "--k", "out of range"),
    (["retrieve", *RET, "--candidates", "0"], "--candidates", "out of range"),
    (["index", "search", *RET, "--rrf-k", "-1"], "--rrf-k", "out of range"),
    (["robustness", *ROB, "--latency-queries", "0"], "--latency-queries", "out of range"),
    (["robustness", *ROB, "--latency-queries", "-5"], "--latency-queries", "out of range"),
    (["robustness", *ROB, "--qps-repeats", "0"], "--qps-repeats", "out of range"),
    (["robustness", *ROB, "--threads", "0"], "--threads", "out of range"),
    (["robustness", *ROB, "--k", "-1"], "--k", "out of range"),
    (["robustness", *ROB, "--delta", "1.5"], "--delta", "(0, 1]"),
    # probes
    (["probe", "names", "--epsilon", "nan"], "--epsilon", "not a finite number"),
    (["probe", "names", "--epsilon", "-0.1"], "--epsilon", "out of range"),
    (["probe", "names", "--runs", "0"], "--runs", "out of range"),
    (["probe", "names", "--n-queries", "0"], "--n-queries", "out of range"),
    (["noise", "--variants", "0"], "--variants", "out of range"),
    (["probe", "noise", "--k", "0"], "--k", "out of range"),
]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "graded.json").write_text("[]")
    return tmp_path


def _refused(result, flag: str, problem: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("ragdiag: error: ") and flag in line and problem in line, line
    assert "Traceback" not in result.output and "╭" not in result.output
    return line


@pytest.mark.parametrize("args, flag, problem", CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_option_value_is_refused_before_any_work(workdir, args, flag, problem):
    before = _snapshot(workdir)
    _refused(runner.invoke(app, args), flag, problem)
    assert _snapshot(workdir) == before


def test_min_coverage_two_fails_before_any_call(workdir):
    """--min-coverage 2 could never be met: refused at parse time, so no server is even contacted."""
    result = runner.invoke(app, ["generate", *GEN, "--min-coverage", "2", "--base-url", "http://127.0.0.1:9/v1"])
    _refused(result, "--min-coverage", "out of range")


PATH_CASES = [
    (["correlate", "--graded", "g.png", "--plot", "heat.gif"], "--plot", "unknown image type '.gif'"),
    (["correlate", "--graded", "g.png", "--plot", "g.png"], "--plot", "would overwrite the input"),
    (["correlate", "--graded", "g.png", "--out", "g.png"], "--out", "would overwrite the input"),
    (["correlate", "--graded", "g.png", "--out", "sub"], "--out", "is a directory"),
    (["correlate", "--graded", "g.png", "--out", "/dev/full"], "--out", "not a regular file"),
    (["correlate", "--graded", "g.png", "--out", "/proc/1/ragdiag.json"], "--out", "not writable"),
    (["correlate", "--graded", "g.png", "--out", "g.png/x.json"], "--out", "is a file, not a folder"),
    (["probe", "names", "--plot", "names.bmp"], "--plot", "unknown image type"),
    (["probe", "names", "--cache-dir", "afile"], "--cache-dir", "exists and is not a folder"),
    (["noise", "--plot", "noise.txt"], "--plot", "unknown image type"),
    (["noise", "--out", "sub"], "--out", "is a directory"),
    (["robustness", *ROB[:4], "--plot-dir", "afile"], "--plot-dir", "exists and is not a folder"),
    (["robustness", *ROB[:4], "--cache-dir", "afile"], "--cache-dir", "exists and is not a folder"),
    (["robustness", *ROB[:4], "--out", "/dev/full"], "--out", "not a regular file"),
    (["index", "build", "--corpus", "g.png", "--out-dir", "afile"], "--out-dir", "exists and is not a folder"),
    (["pipeline", *PIPE[:4], "--out-dir", "afile"], "--out-dir", "exists and is not a folder"),
    (["grade", "--answers", "g.png", "--out", "g.json", "--cache-dir", "afile"], "--cache-dir", "exists and is not a folder"),
    (["retrieve", *RET[:4], "--out", "sub"], "--out", "is a directory"),
    (["evaluate", "--run", "g.png", "--qrels", "g.png", "--plot", "eval.gif"], "--plot", "unknown image type"),
    (["label", "--corpus", "g.png", "--queries", "g.png", "--out", "sub"], "--out", "is a directory"),
    (["label", "--corpus", "g.png", "--queries", "g.png", "--out", "/dev/full"], "--out", "not a regular file"),
]


@pytest.mark.parametrize("args, flag, problem", PATH_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_output_path_is_refused_before_any_work(workdir, args, flag, problem):
    (workdir / "g.png").write_bytes(b"\x89PNG not really graded rows")
    (workdir / "afile").write_text("a file, not a folder")
    (workdir / "sub").mkdir()
    before = _snapshot(workdir)
    _refused(runner.invoke(app, args), flag, problem)
    assert _snapshot(workdir) == before
    assert sorted(os.listdir(workdir / "sub")) == []
