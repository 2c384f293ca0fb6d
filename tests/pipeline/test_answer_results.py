"""The answer commands' results: the result objects read the golden files written before the shape
refactor (issue 17) and write them back unchanged, and the files a rerun writes equal them, run
record and timings aside (replies: the chat test server's output, not an LLM's)."""

from __future__ import annotations

import json

import pytest

from ragdiag.commands.generate import RunManifest, RunSummary
from ragdiag.commands.pipeline import CorpusRunManifest, PipelineMeta
from tests.pipeline.answers_golden import FILES, GOLDEN, golden_server, read_output, run_all, without_volatile


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("answers-golden")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test")
    mp.delenv("OPENAI_BASE_URL", raising=False)
    try:
        server = golden_server().start()
    except OSError as err:
        mp.undo()
        pytest.skip(f"the golden runs need port 127.0.0.1:{err.args}: taken")
    try:
        run_all(workdir, server.base_url)
    finally:
        server.stop()
        mp.undo()
    return workdir


@pytest.mark.parametrize("produced", sorted(FILES))
def test_rerun_matches_the_golden_file(rerun, produced):
    assert without_volatile(read_output(rerun / produced)) == without_volatile(read_output(GOLDEN / FILES[produced]))


@pytest.mark.parametrize("name", ["generate.manifest.json", "grade.manifest.json", "pipeline.answers.manifest.json",
                                  "pipeline.graded.manifest.json", "corpus.graded.manifest.json"])
def test_run_manifest_reads_and_writes_back_the_golden_manifest(name):
    doc = read_output(GOLDEN / name)
    manifest = RunManifest.from_json(doc)
    assert manifest.to_json() == doc and json.dumps(manifest.to_json()) == json.dumps(doc)  # key order too
    assert manifest.summary.items == doc["summary"]["items"] and manifest.command == doc["meta"]["command"]
    assert manifest.summary.stats.calls == doc["summary"]["calls"] and manifest.meta.prompts == doc["meta"]["prompts"]


def test_pipeline_meta_reads_and_writes_back_the_golden_block():
    doc = read_output(GOLDEN / "pipeline.correlation.json")["meta"]["pipeline"]
    meta = PipelineMeta.from_json(doc)
    assert json.dumps(meta.to_json()) == json.dumps(doc)
    assert meta.equivalent_command.startswith("ragdiag correlate --graded pipe/graded.json")
    assert meta.generate_meta.k == [2, 3, 5] and meta.grade_meta.repeats == 1


def test_corpus_run_manifest_reads_and_writes_back_the_golden_file():
    doc = read_output(GOLDEN / "corpus_run.json")
    manifest = CorpusRunManifest.from_json(doc)
    assert json.dumps(manifest.to_json()) == json.dumps(doc)
    assert manifest.meta.retrievers == [{"spec": "bm25", "kind": "bm25"}] and manifest.meta.ks == [1, 3]


def test_a_summary_keeps_keys_it_does_not_name():
    doc = {"items": 2, "covered": 1, "coverage": 0.5, "refine": {"queries": 3}}
    summary = RunSummary.from_json(doc)
    assert summary.to_json() == doc and summary.extra == {"refine": {"queries": 3}} and not summary.has("calls")
