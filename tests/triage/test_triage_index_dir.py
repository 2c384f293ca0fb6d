"""Issue 39: ``triage --index-dir`` reads the passages of a built index folder instead of a corpus —
the corpus file it was built from (checked unchanged) or, for a folder of documents, the passages it
cut (``passages.json``, ids ``path#n``; ``--by-document`` for qrels that judge the documents); the
folder itself is a ``--corpus`` too. Against
the fault-model test server (test-server replies, never an LLM's)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer

FIXTURE = resource_path("fixtures", "triage-synthetic")
QUERIES = ("q001", "q002", "q003")


def _invoke(*args: object):
    return CliRunner().invoke(app, list(map(str, args)))


def _triage(server: FaultServer, out: Path, *args: object):
    return _invoke("triage", "--answers", FIXTURE / "answers.jsonl", "--model", "test-model", "--base-url",
                   server.base_url, "--out-dir", out, "--cache-dir", out.parent / "cache", "--no-progress",
                   "--bootstrap", "50", "--all", "--ids", ",".join(QUERIES), *args)


def _documents() -> list[dict]:
    rows = [json.loads(line) for line in (FIXTURE / "corpus.jsonl").read_text().splitlines()]
    return [r for r in rows if r["_id"].split("-")[0] in QUERIES]


def _run(path: Path, ids: list[str]) -> Path:
    """A TREC run ranking ``ids`` in this order for every triaged query."""
    path.write_text("".join(f"{q} Q0 {d} {r} {100 - r} mine\n" for q in QUERIES for r, d in enumerate(ids, 1)))
    return path


def _qrels(path: Path) -> Path:
    """The fixture's qrels of the triaged queries (their relevant passage is ``QID-d01``)."""
    path.write_text("".join(f"{q}\t0\t{q}-d01\t1\n" for q in QUERIES))
    return path


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]


def _causes(out: Path) -> dict[str, object]:
    return {row["id"]: row["cause"] for row in _rows(out)}


def test_index_of_a_corpus_file_triages_as_the_corpus_does(server, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in _documents()))
    built = _invoke("index", "build", "--corpus", corpus, "--embedder", "none", "--out-dir", tmp_path / "idx")
    assert built.exit_code == 0, built.output
    run = _run(tmp_path / "run.trec", [r["_id"] for r in _documents()])
    qrels = _qrels(tmp_path / "qrels.trec")
    by_corpus = _triage(server, tmp_path / "corpus-out", "--corpus", corpus, "--queries", FIXTURE / "queries.jsonl",
                        "--qrels", qrels, "--run", run)
    assert by_corpus.exit_code == 0, by_corpus.output
    by_index = _triage(server, tmp_path / "index-out", "--index-dir", tmp_path / "idx", "--queries",
                       FIXTURE / "queries.jsonl", "--qrels", qrels, "--run", run)
    assert by_index.exit_code == 0, by_index.output
    assert _rows(tmp_path / "index-out") == _rows(tmp_path / "corpus-out")
    assert json.loads((tmp_path / "index-out" / "triage.json").read_text())["meta"]["dataset"] == "idx"

    before = server.requests
    corpus.write_text(corpus.read_text().replace("Its key", "The key", 1))  # the corpus changed since the build
    changed = _triage(server, tmp_path / "changed", "--index-dir", tmp_path / "idx", "--queries",
                      FIXTURE / "queries.jsonl", "--qrels", qrels, "--run", run)
    assert changed.exit_code == 2, changed.output
    lines = changed.output.strip().splitlines()
    assert len(lines) == 1 and "changed since the index was built" in lines[0], changed.output
    no_qrels = _triage(server, tmp_path / "changed", "--index-dir", tmp_path / "idx", "--run", run)
    assert no_qrels.exit_code == 2 and "give --queries and --qrels too" in no_qrels.output, no_qrels.output
    assert server.requests == before and not (tmp_path / "changed").exists()


def test_index_of_a_folder_of_documents_triages_its_passages_judged_by_document(server, tmp_path):
    folder = tmp_path / "documents"
    for row in _documents():
        (folder / row["_id"].split("-")[0]).mkdir(parents=True, exist_ok=True)
        (folder / row["_id"].split("-")[0] / f"{row['_id']}.md").write_text(row["text"] + "\n")
    built = _invoke("index", "build", "--corpus", folder, "--embedder", "none", "--chunk-size", "1000",
                    "--out-dir", tmp_path / "idx")
    assert built.exit_code == 0, built.output
    passages = json.loads((tmp_path / "idx" / "doc_ids.json").read_text())
    assert passages[0] == "q001/q001-d01.md#0"
    run = _run(tmp_path / "run.trec", passages)
    qrels = tmp_path / "qrels.trec"  # the documents judged, as the user's qrels name them
    qrels.write_text("".join(f"{q} 0 {q}/{q}-d01 1\n" for q in QUERIES))
    done = _triage(server, tmp_path / "out", "--index-dir", tmp_path / "idx", "--queries", FIXTURE / "queries.jsonl",
                   "--qrels", qrels, "--run", run, "--by-document")
    assert done.exit_code == 0, done.output
    rows = _rows(tmp_path / "out")
    assert [row["id"] for row in rows] == list(QUERIES)
    assert [row["relevant"] for row in rows] == [[f"{q}/{q}-d01.md#0"] for q in QUERIES]

    from_folder = _triage(server, tmp_path / "folder-out", "--corpus", folder, "--queries", FIXTURE / "queries.jsonl",
                          "--qrels", qrels, "--run", run, "--by-document")
    assert from_folder.exit_code == 0, from_folder.output  # the folder itself as --corpus: the same passages
    assert _rows(tmp_path / "folder-out") == rows

    flat = _triage(server, tmp_path / "flat", "--corpus", FIXTURE, "--qrels", _qrels(tmp_path / "flat-qrels.trec"), "--run",
                   _run(tmp_path / "flat.trec", [r["_id"] for r in _documents()]))
    assert flat.exit_code == 0, flat.output
    assert _causes(tmp_path / "out") == _causes(tmp_path / "flat")  # the same passages, under their file's name

    before = server.requests
    unjudged = tmp_path / "unknown.trec"
    unjudged.write_text("q001 0 q001/nowhere 1\n")
    refused = _triage(server, tmp_path / "refused", "--index-dir", tmp_path / "idx", "--queries",
                      FIXTURE / "queries.jsonl", "--qrels", unjudged, "--run", run, "--by-document")
    assert refused.exit_code == 2 and "has no passage" in refused.output, refused.output
    assert server.requests == before
