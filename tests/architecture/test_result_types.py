"""Every result kind a command writes is read back through its type (issue 17: results are objects).

The golden files under ``tests/*/golden/`` were written by the code before the result types
existed. Each result file among them is mapped here to its type; ``from_json`` then ``to_json``
must give the document back unchanged, key order included. A golden JSON file that is neither
mapped nor listed as an input or a data file fails the test, so a new result kind cannot be
forgotten.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

RESULT_TYPES = {
    "metrics/golden/correlate_offline.json": "ragdiag.results.correlate:CorrelateResult",
    "metrics/golden/correlate_nw_bootstrap.json": "ragdiag.results.correlate:CorrelateResult",
    "metrics/golden/correlate_real_repeats.json": "ragdiag.results.correlate:CorrelateResult",
    "metrics/golden/correlate_table.json": "ragdiag.results.correlate:CorrelateResult",
    "pipeline/golden/pipeline.correlation.json": "ragdiag.results.correlate:CorrelateResult",
    "evaluate/golden/evaluate.json": "ragdiag.results.evaluate:EvaluateResult",
    "evaluate/golden/evaluate_no_bootstrap.json": "ragdiag.results.evaluate:EvaluateResult",
    "evaluate/golden/clq.json": "ragdiag.results.clq:ClqResult",
    "evaluate/golden/dynamic_k.json": "ragdiag.results.dynamic_k:DynamicKResult",
    "evaluate/golden/label.manifest.json": "ragdiag.results.label:LabelManifest",
    "cli/golden/calibrate.json": "ragdiag.results.calibrate:CalibrateResult",
    "bench/golden/ann.json": "ragdiag.results.robustness:RobustnessResult",
    "bench/golden/runs.json": "ragdiag.results.robustness:RobustnessResult",
    "sweep/golden/sweep.json": "ragdiag.results.sweep:SweepResult",
    "probes/golden/names.json": "ragdiag.results.probes:ProbeRun",
    "probes/golden/noise.json": "ragdiag.results.probes:ProbeRun",
    "probes/golden/names_real.json": "ragdiag.results.probes:NamesRealResult",
    "data/golden/import/import.manifest.json": "ragdiag.results.import_data:ImportResult",
    "pipeline/golden/generate.manifest.json": "ragdiag.results.llm_run:RunManifest",
    "pipeline/golden/grade.manifest.json": "ragdiag.results.llm_run:RunManifest",
    "pipeline/golden/pipeline.answers.manifest.json": "ragdiag.results.llm_run:RunManifest",
    "pipeline/golden/pipeline.graded.manifest.json": "ragdiag.results.llm_run:RunManifest",
    "pipeline/golden/corpus.graded.manifest.json": "ragdiag.results.llm_run:RunManifest",
    "pipeline/golden/corpus_run.json": "ragdiag.results.pipeline:CorpusRunManifest",
    "compare/golden/compare.json": "ragdiag.results.compare:CompareResult",
}
# golden JSON files that are not a command's result: inputs of the golden runs, data files read by
# their own loaders (graded tables, samples), and index-folder manifests read by retrieval.store
NOT_RESULTS = {
    "cli/golden/calibrate_graded.json": "input: a graded table",
    "data/golden/ragas.json": "input: a Ragas export",
    "data/golden/import/texts.json": "data: texts samples, read by data.texts_ranked_loaders",
    "data/golden/import/ranked.json": "data: ranked samples, read by data.texts_ranked_loaders",
    "data/golden/import/graded.json": "data: a graded table, read by data.loaders",
    "pipeline/golden/grade.graded.json": "data: a graded table, read by data.loaders",
    "retrieval/golden/manifest.json": "index folder manifest, read by retrieval.store",
    "retrieval/golden/bm25.jsonl.meta.json": "run sidecar: the index meta and run record of a run file",
    "retrieval/golden/dense.jsonl.meta.json": "run sidecar: the index meta and run record of a run file",
    "retrieval/golden/hybrid.jsonl.meta.json": "run sidecar: the index meta and run record of a run file",
}


def _type(spec: str) -> type:
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def test_every_golden_json_is_a_mapped_result_or_a_listed_input():
    found = {p.relative_to(TESTS).as_posix() for p in TESTS.glob("*/golden/**/*.json")}
    unmapped = sorted(found - RESULT_TYPES.keys() - NOT_RESULTS.keys())
    assert unmapped == [], f"golden JSON files with no result type and no reason: {unmapped}"
    missing = sorted((RESULT_TYPES.keys() | NOT_RESULTS.keys()) - found)
    assert missing == [], f"listed here but not on disk: {missing}"


@pytest.mark.parametrize("relative", sorted(RESULT_TYPES))
def test_each_result_file_reads_back_through_its_type(relative):
    text = (TESTS / relative).read_text(encoding="utf-8")
    document = json.loads(text)
    result = _type(RESULT_TYPES[relative]).from_json(document)
    assert not isinstance(result, dict), "from_json must build the typed object"
    again = result.to_json()
    assert again == document
    assert list(again) == list(document), "key order must survive the round trip"
