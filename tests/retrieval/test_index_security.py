"""Issue 9, security: an index folder someone hands you never runs their code.

Every artifact of an index folder is JSON, faiss's own format, or ``.npy`` arrays loaded with
``allow_pickle=False``. A legacy ``bm25.pkl`` is refused without being opened, and a ``.npy`` that
holds pickled Python objects is refused by numpy before anything is unpickled.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

runner = CliRunner()


class _Payload:
    """Unpickling this writes a marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


@pytest.fixture()
def index(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n"
                              for i, t in enumerate(["lava and volcanoes", "green tea", "barking dogs"])))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q", "text": "volcano"}) + "\n")
    result = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp_path / "idx")])
    assert result.exit_code == 0, result.output
    return tmp_path / "idx", queries


def _retrieve(folder: Path, queries: Path, out: Path):
    return runner.invoke(app, ["retrieve", "--index-dir", str(folder), "--queries", str(queries), "--mode", "bm25",
                               "--k", "2", "--out", str(out)])


def test_no_index_file_is_a_pickle(index):
    folder, _ = index
    for path in folder.rglob("*"):
        if path.is_file():
            head = path.read_bytes()[:2]
            assert head[:1] != b"\x80", f"{path.name} looks like a pickle"
            if path.suffix == ".npy":
                array = np.load(path, allow_pickle=False)  # raises if it held objects
                assert array.dtype != object


def test_legacy_bm25_pickle_is_refused_unopened(index, tmp_path):
    folder, queries = index
    marker = tmp_path / "marker.txt"
    (folder / "bm25.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    result = _retrieve(folder, queries, tmp_path / "run.jsonl")
    assert result.exit_code == 2
    assert "holds bm25.pkl" in result.stderr and "rebuild the index" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not marker.exists() and not (tmp_path / "run.jsonl").exists()


def test_pickled_objects_inside_npy_arrays_are_never_unpickled(index, tmp_path):
    folder, queries = index
    marker = tmp_path / "marker.txt"
    target = folder / "bm25" / "data.csc.index.npy"
    os.remove(target)
    np.save(target, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    result = _retrieve(folder, queries, tmp_path / "run.jsonl")
    assert result.exit_code == 2 and "are corrupt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not marker.exists() and not (tmp_path / "run.jsonl").exists()


def test_hostile_bm25_params_cannot_reach_a_constructor(index, tmp_path):
    folder, queries = index
    params = folder / "bm25" / "params.index.json"
    params.write_text(json.dumps({**json.loads(params.read_text()), "__class__": "os.system"}))
    result = _retrieve(folder, queries, tmp_path / "run.jsonl")
    assert result.exit_code == 2 and "are corrupt" in result.stderr
