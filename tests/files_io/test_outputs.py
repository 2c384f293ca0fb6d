"""Issue 9, outputs: no command writes over one of its inputs (same path, symlink or hard link),
manifests are named from the whole output name, and a bad output path is one line with nothing
half-written. Drives the real CLI; LLM runs use the local chat test server on 127.0.0.1."""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer

# click < 8.2 mixes stderr into stdout unless told not to
runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line_refusal(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture()
def inputs(tmp_path, monkeypatch):
    """One small input file of each kind, in its own folder (the working directory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "cache"))
    texts, ranked = write_tiny(tmp_path / "data")
    rng = np.random.default_rng(0)
    np.save(tmp_path / "base.npy", rng.standard_normal((50, 8)).astype(np.float32))
    np.save(tmp_path / "queries.npy", rng.standard_normal((4, 8)).astype(np.float32))
    files = {
        "texts": texts, "ranked": ranked, "base": tmp_path / "base.npy", "qvec": tmp_path / "queries.npy",
        "graded": tmp_path / "graded.json", "answers": tmp_path / "answers.jsonl", "queries": tmp_path / "queries.jsonl",
        "run": tmp_path / "run.jsonl", "qrels": tmp_path / "qrels.tsv", "noise": tmp_path / "noise.jsonl",
    }
    files["graded"].write_text(json.dumps([{"id": "M-1", "E": "AM", "Nc": 6, "Np": 2, "K": 2, "inK": [1, 1], "grade": 4}]))
    files["answers"].write_text('{"kind": "ideal", "id": "M-1", "answer": "a"}\n')
    files["queries"].write_text('{"_id": "q1", "text": "volcano"}\n')
    files["run"].write_text('{"query_id": "q1", "ids": ["d1"], "scores": [1.0]}\n')
    files["qrels"].write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    files["noise"].write_text('{"query": "volcano height", "reference": "The volcano is tall."}\n')
    return files


# (command builder, the input it must not overwrite, the output flag)
OVERWRITES = [
    (lambda f, o: ["correlate", "--graded", str(f["graded"]), "--out", o], "graded", "--out"),
    (lambda f, o: ["correlate", "--graded", str(f["graded"]), "--plot", o], "graded", "--plot"),
    (lambda f, o: ["grade", "--answers", str(f["answers"]), "--out", o, "--cache", "replay"], "answers", "--out"),
    (lambda f, o: ["generate", "--texts", str(f["texts"]), "--ranked", str(f["ranked"]), "--out", o, "--cache", "replay"], "texts", "--out"),
    (lambda f, o: ["generate", "--texts", str(f["texts"]), "--ranked", str(f["ranked"]), "--out", o, "--cache", "replay"], "ranked", "--out"),
    (lambda f, o: ["generate", "--texts", str(f["texts"]), "--embedder", "local", "--out", "a.jsonl", "--ranked-out", o,
                   "--cache", "replay"], "texts", "--ranked-out"),
    (lambda f, o: ["retrieve", "--index-dir", "idx", "--queries", str(f["queries"]), "--out", o], "queries", "--out"),
    (lambda f, o: ["robustness", "--run", str(f["run"]), "--qrels", str(f["qrels"]), "--out", o], "run", "--out"),
    (lambda f, o: ["robustness", "--run", str(f["run"]), "--qrels", str(f["qrels"]), "--out", o], "qrels", "--out"),
    (lambda f, o: ["robustness", "--base-vectors", str(f["base"]), "--query-vectors", str(f["qvec"]), "--per-query", o],
     "base", "--per-query"),
    (lambda f, o: ["noise", "--queries", str(f["noise"]), "--out", o], "noise", "--out"),
]


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
@pytest.mark.parametrize("build, victim, flag", OVERWRITES, ids=lambda v: v if isinstance(v, str) else None)
def test_output_onto_an_input_is_refused(inputs, tmp_path, build, victim, flag, how):
    target = inputs[victim]
    if flag == "--plot":  # a plot must have an image suffix: make the input one
        target = target.rename(target.with_suffix(".png"))
        inputs[victim] = target
    out = target
    if how == "symlink":
        out = tmp_path / f"link-to-{target.name}"
        out.symlink_to(target)
    elif how == "hard link":
        out = tmp_path / f"hard-{target.name}"
        os.link(target, out)
    before = _snapshot(tmp_path)
    line = _one_line_refusal(runner.invoke(app, build(inputs, str(out))))
    assert flag in line and "would overwrite the input" in line, line
    assert _snapshot(tmp_path) == before  # the input byte-identical, nothing else written


def test_cache_export_onto_the_cache_file_is_refused(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    db = cache / "llm_calls.sqlite"
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("create table t (x)")
    before = db.read_bytes()
    result = runner.invoke(app, ["cache", "export", "--cache-dir", str(cache), "--out", str(db)])
    assert result.exit_code == 2 and result.stderr.startswith("ragdiag: error: "), result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == before


BAD_OUTS = {
    "correlate": lambda f, o: ["correlate", "--graded", str(f["graded"]), "--out", o],
    "grade": lambda f, o: ["grade", "--answers", str(f["answers"]), "--out", o],
    "generate": lambda f, o: ["generate", "--texts", str(f["texts"]), "--ranked", str(f["ranked"]), "--out", o],
    "retrieve": lambda f, o: ["retrieve", "--index-dir", "idx", "--queries", str(f["queries"]), "--out", o],
    "robustness": lambda f, o: ["robustness", "--run", str(f["run"]), "--qrels", str(f["qrels"]), "--out", o],
    "noise": lambda f, o: ["noise", "--out", o],
    "probe names": lambda f, o: ["probe", "names", "--out", o],
    "cache export": lambda f, o: ["cache", "export", "--out", o],
}


@pytest.mark.parametrize("where, problem", [("a folder", "is a directory"), ("/dev/full", "not a regular file"),
                                            ("/proc/1/out.json", "not writable"), ("graded.json/x", "is a file, not a folder")])
@pytest.mark.parametrize("command", sorted(BAD_OUTS))
def test_unusable_out_is_one_line_and_nothing_half_written(inputs, tmp_path, command, where, problem):
    (tmp_path / "a folder").mkdir()
    before = _snapshot(tmp_path)
    line = _one_line_refusal(runner.invoke(app, BAD_OUTS[command](inputs, where)))
    assert "--out" in line, line
    assert problem in line, line
    assert _snapshot(tmp_path) == before
    assert not list((tmp_path / "a folder").iterdir())


def test_manifest_names_never_collide(tmp_path, monkeypatch):
    """generate --out run.jsonl then grade --out run.json, and grade --out g.manifest.json: every file kept."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    cache = ["--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    with ChatServer() as server:
        url = ["--base-url", server.base_url]
        answers = tmp_path / "run.jsonl"
        result = runner.invoke(app, ["generate", "--texts", str(texts), "--ranked", str(ranked), "--ks", "2",
                                     "--out", str(answers), *url, *cache])
        assert result.exit_code == 0, result.output
        for out in (tmp_path / "run.json", tmp_path / "g.manifest.json"):
            result = runner.invoke(app, ["grade", "--answers", str(answers), "--out", str(out), *url, *cache])
            assert result.exit_code == 0, result.output
    graded_a = json.loads((tmp_path / "run.json").read_text())
    graded_b = json.loads((tmp_path / "g.manifest.json").read_text())
    assert isinstance(graded_a, list) and graded_a == graded_b and len(graded_a) == 4
    manifests = {name: json.loads((tmp_path / name).read_text()) for name in
                 ("run.jsonl.manifest.json", "run.json.manifest.json", "g.manifest.json.manifest.json")}
    assert all(isinstance(m, dict) for m in manifests.values())
    assert manifests["run.jsonl.manifest.json"] != manifests["run.json.manifest.json"]
    kinds = [json.loads(line).get("kind") for line in answers.read_text().splitlines()]
    assert kinds.count("ideal") == 4 and "topK" in kinds


@pytest.fixture()
def small_beir(tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "volcano"}\n{"_id": "d2", "text": "glacier"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "volcano"}\n')
    (tmp_path / "qrels.tsv").write_text("q1\t0\td1\t3\n")
    (tmp_path / "run.jsonl").write_text('{"query_id": "q1", "ids": ["d1", "d2"], "scores": [1.0, 0.5]}\n')
    return tmp_path


# commands whose own library refuses (its line names the files, not the flag)
GUARDED_BY_THE_LIBRARY = [
    ("evaluate --out = --run", lambda d, o: ["evaluate", "--run", str(d / "run.jsonl"), "--qrels", str(d / "qrels.tsv"),
                                             "--out", o], "run.jsonl"),
    ("evaluate --out = --qrels", lambda d, o: ["evaluate", "--run", str(d / "run.jsonl"), "--qrels", str(d / "qrels.tsv"),
                                               "--out", o], "qrels.tsv"),
    ("label --out = --queries", lambda d, o: ["label", "--corpus", str(d / "corpus.jsonl"), "--queries",
                                              str(d / "queries.jsonl"), "--out", o, "--cache", "replay"], "queries.jsonl"),
    ("label --out = --corpus", lambda d, o: ["label", "--corpus", str(d / "corpus.jsonl"), "--queries",
                                             str(d / "queries.jsonl"), "--out", o, "--cache", "replay"], "corpus.jsonl"),
]


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
@pytest.mark.parametrize("name, build, victim", GUARDED_BY_THE_LIBRARY, ids=lambda v: v if isinstance(v, str) and " " in v else None)
def test_new_commands_refuse_an_output_onto_an_input(small_beir, name, build, victim, how):
    target = small_beir / victim
    out = target
    if how == "symlink":
        out = small_beir / f"link-{victim}"
        out.symlink_to(target)
    elif how == "hard link":
        out = small_beir / f"hard-{victim}"
        os.link(target, out)
    before = _snapshot(small_beir)
    line = _one_line_refusal(runner.invoke(app, build(small_beir, str(out)), env={"RAGDIAG_CACHE_DIR": str(small_beir / "c")}))
    assert "would overwrite the input" in line, line
    assert _snapshot(small_beir) == before


def test_pipeline_refuses_an_input_inside_its_out_dir_under_an_output_name(tmp_path):
    out_dir = tmp_path / "out"
    texts, ranked = write_tiny(out_dir)
    texts = texts.rename(out_dir / "answers.jsonl")  # the name pipeline writes its answers under
    before = _snapshot(tmp_path)
    result = runner.invoke(app, ["pipeline", "--texts", str(texts), "--ranked", str(ranked), "--out-dir", str(out_dir),
                                 "--cache", "replay", "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    line = _one_line_refusal(result)
    assert "would overwrite the input" in line and "answers.jsonl" in line, line
    assert _snapshot(tmp_path) == before


OUT_DIRS = {
    "pipeline": lambda f, o: ["pipeline", "--texts", str(f["texts"]), "--ranked", str(f["ranked"]), "--out-dir", o,
                              "--cache", "replay", "--base-url", "http://127.0.0.1:9/v1", "--no-progress"],
    "import ragas": lambda f, o: ["import", "ragas", str(f["graded"]), "--out-dir", o],
    "index build": lambda f, o: ["index", "build", "--corpus", str(f["queries"]), "--embedder", "none", "--out-dir", o],
}


@pytest.mark.parametrize("where", ["/proc/ragdiag-out", "/proc/self/ragdiag-out/deeper", "/sys/ragdiag-out"])
@pytest.mark.parametrize("command", sorted(OUT_DIRS))
def test_out_dir_on_a_virtual_filesystem_is_refused_before_any_work(inputs, tmp_path, command, where):
    """Issue 18: the permission bits say yes to root; only creating a file tells. A probe file is
    created and removed before any call (pipeline runs on an empty replay cache: a call would fail
    with a replay miss instead)."""
    before = _snapshot(tmp_path)
    line = _one_line_refusal(runner.invoke(app, OUT_DIRS[command](inputs, where)))
    assert "--out" in line or "index folder" in line, line
    assert "is not writable (creating a probe file there failed" in line, line
    assert _snapshot(tmp_path) == before and not Path(where).exists()


def test_probe_file_leaves_nothing_behind(tmp_path):
    from ragdiag.io.writer import check_output_dir, check_output_path

    check_output_dir(tmp_path / "new" / "folder", "--out-dir")
    check_output_path(tmp_path / "out.json", "--out")
    assert list(tmp_path.iterdir()) == []
