"""A result built in code (no file read: ``present`` empty) writes the golden file's keys in the golden
order, nulls included where the command writes them: the ``optional`` and ``layout`` declarations of
the records that replaced hand-written ``to_json`` methods (evaluate, clq, dynamic-k, label, calibrate,
probes, import, corpus run) reproduce what those methods wrote."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ragdiag.results.base import JsonRecord
from tests.architecture.test_result_types import RESULT_TYPES, TESTS, _type

BUILT_IN_CODE = [
    "cli/golden/calibrate.json",
    "data/golden/import/import.manifest.json",
    "evaluate/golden/clq.json",
    "evaluate/golden/dynamic_k.json",
    "evaluate/golden/evaluate.json",
    "evaluate/golden/evaluate_no_bootstrap.json",
    "evaluate/golden/label.manifest.json",
    "pipeline/golden/corpus_run.json",
    "probes/golden/names.json",
    "probes/golden/names_real.json",
    "probes/golden/noise.json",
]


def forget_order(value: Any) -> None:
    """Make every record in ``value`` look built in code: no key order read from a file."""
    if isinstance(value, JsonRecord):
        value.present = ()
        for f in dataclasses.fields(value):
            forget_order(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            forget_order(item)
    elif isinstance(value, dict):
        for item in value.values():
            forget_order(item)
    elif hasattr(value, "results"):  # ProbeRun: a list of records
        forget_order(value.results)


@pytest.mark.parametrize("relative", BUILT_IN_CODE)
def test_a_record_built_in_code_writes_the_golden_keys_in_order(relative):
    assert relative in RESULT_TYPES
    document = json.loads((TESTS / relative).read_text(encoding="utf-8"))
    result = _type(RESULT_TYPES[relative]).from_json(document)
    forget_order(result)
    assert json.dumps(result.to_json()) == json.dumps(document)


def test_forget_order_reaches_nested_records():
    document = json.loads((TESTS / "evaluate/golden/evaluate.json").read_text(encoding="utf-8"))
    result = _type(RESULT_TYPES["evaluate/golden/evaluate.json"]).from_json(document)
    forget_order(result)
    assert result.present == () and result.runs[0].decision.present == () and result.runs[0].metrics[0].present == ()
