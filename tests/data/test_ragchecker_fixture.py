"""``fixtures/ragchecker-meta/`` (built by ``tools/build_ragchecker_meta.py`` from RAGChecker's
meta-evaluation, Apache-2.0): its licence travels with it, and every row holds what the budget
benchmark reads (two annotators' preferences −2 … 2, RAGChecker's scores in [0, 1])."""

from __future__ import annotations

import csv
from pathlib import Path

from tools.build_ragchecker_meta import COLUMNS, build_rows

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "ragchecker-meta"


def test_the_licence_and_source_travel_with_the_data():
    assert "Apache License" in (FOLDER / "LICENSE").read_text()
    assert "Amazon.com" in (FOLDER / "NOTICE").read_text()
    source = (FOLDER / "SOURCE.md").read_text()
    assert "6091f08c00e676e87a970f2aeb4a23a484746348" in source and "Apache-2.0" in source


def test_every_pair_has_two_annotators_and_both_scores():
    with (FOLDER / "pairs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 280 and tuple(rows[0]) == COLUMNS
    assert [int(r["instance_id"]) for r in rows] == sorted(int(r["instance_id"]) for r in rows)
    for row in rows:
        assert all(-2 <= int(row[f"human{a}_{label}"]) <= 2 for a in (1, 2)
                   for label in ("correctness", "completeness", "overall"))
        assert all(0 <= float(row[f"ragchecker{s}_overall"]) <= 1 for s in (1, 2))


def test_the_builder_pairs_two_annotator_records_with_one_score_record():
    human = [{"instance_id": 3, "correctness_label": c, "completeness_label": 0, "overall_label": c} for c in (1, -1)]
    score = {"instance_id": 3, "dataset": "kiwi", "query_id": "7",
             "model1": {"model_name": "a", "ragchecker": {"correctness_label": 0.5, "completeness_label": 0.25,
                                                          "overall_label": float("nan")}},
             "model2": {"model_name": "b", "ragchecker": {"correctness_label": 1, "completeness_label": 0,
                                                          "overall_label": 0}}}
    assert build_rows(human, [score]) == [[3, "kiwi", "7", "a", "b", 1, 0, 1, -1, 0, -1,
                                           "0.500000", "0.250000", "", "1.000000", "0.000000", "0.000000"]]
