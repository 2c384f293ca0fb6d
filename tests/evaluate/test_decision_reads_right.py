"""Issue 39: evaluate's output read right by a newcomer — the PROC decision says its depth and, when
another K decides otherwise, says why; fewer than 5 queries carry a warning; the preamble speaks the
user's words."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ragdiag.report.evaluate_report import decision_lines, header_lines
from ragdiag.results.evaluate import EvaluateResult

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "evaluate.json").read_text())


def test_the_decision_names_its_depth():
    lines = decision_lines(EvaluateResult.from_json(GOLDEN))
    assert lines[0].startswith("bm25: at K = 2, retrieval-bound") and lines[1].startswith("dense: at K = 2, near ceiling")


def test_another_k_deciding_otherwise_is_stated_with_why():
    doc = copy.deepcopy(GOLDEN)
    decision = doc["runs"][1]["decision"]
    other = next(v for v in decision["by_k"] if v["k"] != decision["k"])
    other["verdict"] = "ordering-bound"
    lines = decision_lines(EvaluateResult.from_json(doc))
    said = [line for line in lines if line.startswith("dense: at K = 3 ordering-bound")]
    assert said and "each K judges its own top against the same pool" in said[0] and "K = 2, the first --k" in said[0]


def test_a_k_at_the_pool_depth_is_called_uninformative():
    doc = copy.deepcopy(GOLDEN)
    doc["runs"][0]["decision"]["k"] = doc["params"]["pool_depth"]
    assert any("reaches the pool depth" in line for line in decision_lines(EvaluateResult.from_json(doc)))


def test_fewer_than_five_queries_carry_a_warning_and_the_preamble_has_no_jargon():
    lines = header_lines(EvaluateResult.from_json(GOLDEN))
    assert any(line.startswith("warning: only 4 judged queries") for line in lines)
    assert not any("seed 001" in line or "were lost" in line for line in lines)
    doc = copy.deepcopy(GOLDEN)
    doc["meta"]["n_queries"] = 40
    assert not any(line.startswith("warning:") for line in header_lines(EvaluateResult.from_json(doc)))


def test_the_table_comes_after_one_line_and_the_conventions_after_it():
    """Issue 39: a newcomer sees what was evaluated in one line, then the numbers; the weights, the
    ir_measures conventions and each run's depth are notes after the table."""
    from ragdiag.report.evaluate_report import note_lines

    result = EvaluateResult.from_json(GOLDEN)
    head = header_lines(result)
    assert len([line for line in head if not line.startswith("warning:")]) == 1
    notes = note_lines(result)
    assert notes[0].startswith("weights:") and any(line.startswith("run ") for line in notes)
