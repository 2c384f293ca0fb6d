"""Golden files test ragdiag, not its dependencies (issue 28): every golden comparison goes through
:func:`tests.golden.comparable`, which drops the run record, dependency versions, hosts, timings and
ports at any depth, so a new faker or numpy release, another machine or another path changes nothing."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

from tests.golden import FLOAT_TOKEN, VOLATILE, comparable, same_text

TESTS = Path(__file__).resolve().parent
GOLDEN_JSON = sorted(p for p in TESTS.glob("*/golden/**/*.json"))
# ad-hoc strippers that compared only part of the surroundings (the faker version slipped through one)
AD_HOC = re.compile(r'!= "run_record"|k not in VOLATILE|k not in TIMING_KEYS')


def _surroundings_changed(doc):
    """``doc`` as another machine, another day and newer dependencies would write it."""
    if isinstance(doc, dict):
        out = {}
        for key, value in doc.items():
            if key == "versions" and isinstance(value, dict):
                out[key] = {name: "999.0.0" for name in value}
            elif key in VOLATILE:
                out[key] = "elsewhere"
            else:
                out[key] = _surroundings_changed(value)
        return out
    if isinstance(doc, list):
        return [_surroundings_changed(v) for v in doc]
    if isinstance(doc, str):
        return re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:1", doc)
    return doc


def test_comparable_drops_versions_hosts_timings_and_ports_at_any_depth():
    doc = {"run_record": {"host": "a"}, "meta": {"versions": {"faker": "40.54.0"}, "python": "3.11.7", "seconds": 3.2,
                                                  "embedder": "openai:x@http://127.0.0.1:44223/v1",
                                                  "source": "/work/shared/data/scifact/corpus.jsonl", "k": 5},
           "rows": [{"platform": "Linux", "value": 0.25}]}
    assert comparable(doc) == {"meta": {"embedder": "openai:x@http://127.0.0.1:PORT/v1",
                                        "source": "shared/data/scifact/corpus.jsonl", "k": 5},
                               "rows": [{"value": 0.25}]}


def test_a_number_change_still_shows():
    doc = {"meta": {"versions": {"numpy": "2.4.6"}}, "value": 0.5}
    assert comparable(doc) != comparable({**doc, "value": 0.51})


@pytest.mark.parametrize("path", GOLDEN_JSON, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_golden_file_compares_equal_under_other_surroundings(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert comparable(_surroundings_changed(copy.deepcopy(doc))) == comparable(doc)


def test_golden_tests_compare_through_comparable():
    offenders = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
                 if p.name != "golden.py" and p != Path(__file__) and AD_HOC.search(p.read_text(encoding="utf-8"))]
    assert offenders == [], f"compare golden files through tests.golden.comparable, not an ad-hoc stripper: {offenders}"


GOLDEN_JSONL = sorted(TESTS.glob("*/golden/**/*.jsonl"))
GOLDEN_TEXT = sorted(p for suffix in ("csv", "tsv", "txt") for p in TESTS.glob(f"*/golden/**/*.{suffix}"))


def _read_golden(path: Path):
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else json.loads(text)


def _floats_moved(doc, step):
    """``doc`` with every float moved by ``step(value)``, and how many were."""
    moved = 0

    def move(value):
        nonlocal moved
        if isinstance(value, dict):
            return {k: move(v) for k, v in value.items()}
        if isinstance(value, list):
            return [move(v) for v in value]
        if isinstance(value, float) and math.isfinite(value):
            moved += 1
            return step(value)
        return value

    return move(doc), moved


def _one_ulp(value: float) -> float:
    return math.nextafter(value, math.inf)


@pytest.mark.parametrize("path", GOLDEN_JSON + GOLDEN_JSONL, ids=lambda p: str(p.relative_to(TESTS)))
def test_one_ulp_on_every_float_of_a_golden_file_changes_nothing(path):
    doc = _read_golden(path)
    perturbed, moved = _floats_moved(copy.deepcopy(doc), _one_ulp)
    assert comparable(perturbed) == comparable(doc)
    if moved:  # and a change a test means still shows
        changed, _ = _floats_moved(copy.deepcopy(doc), lambda v: v * (1 + 1e-6) + 1e-6)
        assert comparable(changed) != comparable(doc)


def test_the_golden_files_hold_floats_to_perturb():
    assert sum(_floats_moved(_read_golden(p), _one_ulp)[1] for p in GOLDEN_JSON + GOLDEN_JSONL) > 1000


@pytest.mark.parametrize("path", GOLDEN_TEXT, ids=lambda p: str(p.relative_to(TESTS)))
def test_one_ulp_on_every_float_of_a_text_golden_changes_nothing(path):
    text = path.read_text(encoding="utf-8")
    perturbed = FLOAT_TOKEN.sub(lambda m: repr(_one_ulp(float(m.group()))), text)
    assert same_text(perturbed, text)
    if perturbed != text:
        changed = FLOAT_TOKEN.sub(lambda m: repr(float(m.group()) * 1.001 + 0.001), text)
        assert not same_text(changed, text)


def test_counts_and_ids_stay_exact():
    doc = {"n": 30, "id": "q1", "ok": True, "value": 0.25}
    assert comparable({**doc, "n": 31}) != comparable(doc)
    assert comparable({**doc, "id": "q2"}) != comparable(doc)
    assert comparable({**doc, "ok": False}) != comparable(doc)
    assert comparable({**doc, "value": 0.25000000000000006}) == comparable(doc)
    assert not same_text("rows 96 (skipped: 0)", "rows 97 (skipped: 0)")
    assert not same_text("rows 96", "rows 966") and not same_text("q11", "q1")
    assert same_text("│ 0.25 │", "│ 0.25000000000000006      │")


def test_float32_values_get_the_float32_tolerance():
    from tests.golden import FLOAT32_REL_TOL

    a, b = {"scores": [0.031871430575847626]}, {"scores": [0.03187143802642822]}  # 4 float32 ulps apart
    assert comparable(a) != comparable(b)
    assert comparable(a, rel_tol=FLOAT32_REL_TOL) == comparable(b, rel_tol=FLOAT32_REL_TOL)
    assert comparable({"s": [0.0319]}, rel_tol=FLOAT32_REL_TOL) != comparable(a, rel_tol=FLOAT32_REL_TOL)
