"""Issue 39: the first embedding line came after minutes (one per finished batch); a line now comes at
least every ``every`` seconds while one long step runs, and a model load says it is still loading."""

from __future__ import annotations

import io
import threading
import time
from functools import partial

from ragdiag.io import progress
from ragdiag.io.progress import LineProgress, waiting

# The store's uncounted steps speak after 1 s; here after 0.2 s, and the stand-in for a slow step lasts
# until its note is out (at most 10 s) instead of a fixed 1.3 s sleep: the same lines, without the wait.
STEP_AFTER_S = 0.2


def _quick_steps_noting(monkeypatch, text: str) -> threading.Event:
    """The store's steps speak after ``STEP_AFTER_S``; the event is set once a note holding ``text`` is out."""
    from ragdiag.retrieval import store

    noted, real_note = threading.Event(), progress.note

    def note(message: str, stream=None) -> None:
        real_note(message, stream)
        if text in message:
            noted.set()

    monkeypatch.setattr(progress, "note", note)
    monkeypatch.setattr(store, "step", partial(progress.step, after=STEP_AFTER_S))
    return noted


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


def test_a_step_without_a_count_speaks_after_its_first_second_and_every_few_seconds():
    from ragdiag.io.progress import step

    stream = io.StringIO()
    with step("building the BM25 index over 9 passages", after=0.05, every=0.05, stream=stream):
        time.sleep(0.3)
    printed = stream.getvalue().splitlines()
    assert printed[0] == "ragdiag: note: building the BM25 index over 9 passages …"
    assert len(printed) >= 3 and printed[1].startswith("ragdiag: note: still building the BM25 index")
    quiet = io.StringIO()
    with step("short", after=0.5, stream=quiet):
        pass
    with step("disabled", enabled=False, after=0.0, every=0.01, stream=quiet):
        time.sleep(0.05)
    assert quiet.getvalue() == ""


def test_index_build_and_bm25_search_report_their_uncounted_steps(tmp_path, monkeypatch, capsys):
    """Before: BM25 indexing, the faiss build and reading the corpus printed nothing however long they took."""
    from ragdiag.retrieval import store
    from ragdiag.retrieval.bm25 import BM25Index

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(f'{{"_id": "d{i}", "text": "word{i} common"}}\n' for i in range(5)))
    slow_build = BM25Index.build.__func__
    noted = _quick_steps_noting(monkeypatch, "building the BM25 index")

    def build(cls, *args, **kwargs):
        assert noted.wait(10)  # a large corpus: still building when the note comes
        return slow_build(cls, *args, **kwargs)

    monkeypatch.setattr(BM25Index, "build", classmethod(build))
    options = store.BuildOptions(corpus=corpus, out=tmp_path / "idx", embedder="none")
    store.build_indexes(options, store.check_build_options(options), progress=True)
    assert "ragdiag: note: building the BM25 index over 5 passages …" in capsys.readouterr().err
    store.build_indexes(options, store.check_build_options(options), progress=False)
    assert "building the BM25 index" not in capsys.readouterr().err


def test_retrieve_says_it_is_loading_a_large_bm25_index_and_reading_its_ids(tmp_path, monkeypatch):
    """Before: ``retrieve`` loaded the index of a large corpus silently (minutes for millions of passages)."""
    from typer.testing import CliRunner

    from ragdiag.cli import app
    from ragdiag.retrieval import store

    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(f'{{"_id": "d{i}", "text": "word{i} common"}}\n' for i in range(5)))
    queries.write_text('{"_id": "q1", "text": "word1"}\n')
    built = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "none",
                                     "--out-dir", str(tmp_path / "idx")])
    assert built.exit_code == 0, built.output
    slow_load = store.load_bm25
    noted = _quick_steps_noting(monkeypatch, "loading the BM25 index")

    def load_bm25(*args, **kwargs):
        assert noted.wait(10)  # a large index: still loading when the note comes
        return slow_load(*args, **kwargs)

    monkeypatch.setattr(store, "load_bm25", load_bm25)
    res = CliRunner().invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(queries),
                                   "--mode", "bm25", "--k", "2", "--out", str(tmp_path / "run.jsonl")])
    assert res.exit_code == 0, res.output
    assert f"ragdiag: note: loading the BM25 index {tmp_path / 'idx' / 'bm25'} …" in res.stderr
    assert "reading the ids" not in res.stderr  # a short read stays silent


def test_loading_a_large_faiss_index_says_so(tmp_path, monkeypatch, capsys):
    import faiss
    import numpy as np

    from ragdiag.retrieval import store

    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32)[:3])
    faiss.write_index(index, str(tmp_path / store.DENSE))
    slow_load = store.load_index
    noted = _quick_steps_noting(monkeypatch, "loading the faiss index")

    def load_index(path):
        assert noted.wait(10)  # a large index file: still loading when the note comes
        return slow_load(path)

    monkeypatch.setattr(store, "load_index", load_index)
    folder = store.IndexDir(tmp_path, {"meta": {"embedder": "st:x"}}, ["a", "b", "c"], progress=True)
    assert folder.dense().ntotal == 3
    assert f"ragdiag: note: loading the faiss index {tmp_path / store.DENSE} (" in capsys.readouterr().err
    store.IndexDir(tmp_path, {"meta": {"embedder": "st:x"}}, ["a", "b", "c"]).dense()
    assert capsys.readouterr().err == ""
