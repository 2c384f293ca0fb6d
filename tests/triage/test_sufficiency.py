"""The reference-free path's parts without a server: strict parsing of the rater's and the reference-free
judge's replies, the contexts the rater's needed passages give, and the reference-free tree."""

from __future__ import annotations

import pytest

from ragdiag.answers.reference_free import parse_verdict
from ragdiag.triage.interventions import BASELINE
from ragdiag.triage.sufficiency import (
    Rating,
    Sufficiency,
    free_cause,
    inject_context,
    parse_rating,
    sufficient_contexts,
)
from ragdiag.triage.tree import CAUSES, FIXES, Evidence, decide, evidence_of


@pytest.mark.parametrize("reply, expected", [
    ('{"sufficient": true, "needed": [3, 1], "reason": "x"}', (True, [1, 3])),
    ('```json\n{"sufficient": false, "needed": []}\n```', (False, [])),
    ('{"sufficient": true, "needed": []}', None),  # sufficient without a needed passage
    ('{"sufficient": false, "needed": [2]}', None),  # insufficient yet a needed passage
    ('{"sufficient": "yes", "needed": [1]}', None),
    ('{"sufficient": true, "needed": [6]}', None),  # only 5 passages
    ('{"sufficient": true, "needed": [1, 1]}', None),
    ('{"sufficient": true, "needed": [true]}', None),
    ('{"sufficient": true}', None),
    ("The passages are sufficient.", None),
    ("[true, [1]]", None),
])
def test_rater_replies_are_parsed_strictly(reply, expected):
    assert parse_rating(reply, 5) == expected


@pytest.mark.parametrize("reply, expected", [
    ('{"grade": 5, "abstained": false, "reason": "ok"}', (5, False)),
    ('{"grade": 2, "abstained": true}', (2, True)),
    ('{"grade": 4.0, "abstained": false}', (4, False)),
    ('{"grade": 5, "abstained": true}', None),  # an abstention is graded 2
    ('{"grade": 5}', None),
    ('{"grade": 6, "abstained": false}', None),
    ('{"grade": NaN, "abstained": false}', None),
    ('{"grade": true, "abstained": false}', None),
    ('{"grade": 3, "abstained": "no"}', None),
    ("5", None),  # a bare digit is no verdict here: the abstention is missing
])
def test_reference_free_judge_replies_are_parsed_strictly(reply, expected):
    assert parse_verdict(reply) == expected


TOP = ["a", "b", "c", "d", "e"]
POOL = [*TOP, "f", "g", "h"]


def test_sufficient_contexts_change_one_thing_each():
    enabled = ("position", "k-sweep", "drop-distractors")
    out = sufficient_contexts(TOP, ("c",), POOL, 5, (1, 3, 5, 10), enabled)
    assert out == {"position": ("c", "a", "b", "d", "e"), "k-sweep@3": ("a", "b", "c"), "drop-distractors": ("c",)}
    # the needed passage first: no position; k = 1 equals the drop-distractors context: not a separate test
    assert sufficient_contexts(TOP, ("a",), POOL, 5, (1, 3, 5, 10), enabled) == {
        "k-sweep@3": ("a", "b", "c"), "drop-distractors": ("a",)}
    assert sufficient_contexts(TOP, tuple(TOP), POOL, 5, (1, 3), enabled) == {}  # all needed: nothing to drop


def test_inject_moves_the_needed_passages_below_k_into_the_top_k():
    assert inject_context(TOP, ("g",)) == ("a", "b", "c", "d", "g")
    assert inject_context(TOP, ("e", "g")) == ("a", "b", "c", "g", "e")  # a needed top-K passage stays
    assert inject_context(TOP, ("a",)) is None  # nothing below K


def _ev(grades: dict[str, float], planned: set[str]) -> Evidence:
    return Evidence(False, False, False, 5, 3.0, planned, {BASELINE: 1.0, **grades}, sufficient_context=True)


def _suff(top: bool | None, pool: bool | None = None, needed: tuple[str, ...] = ()) -> Sufficiency:
    return Sufficiency(Rating(top, needed if top else ()),
                       None if pool is None and top is not False else Rating(pool, needed if pool else ()), 8)


@pytest.mark.parametrize("suff, abstained, planned, grades, expected", [
    (_suff(None), True, set(), {}, ("unexplained", [])),  # the rater undecided: never a cause
    (_suff(False), False, set(), {}, ("unsupported", [])),  # answered without sufficient context
    (Sufficiency(Rating(False)), True, set(), {}, (None, [])),  # the pool is still to rate
    (_suff(False, False), True, set(), {}, ("retrieval-miss", [])),
    (_suff(False, True, ("g",)), True, {"inject"}, {}, (None, [])),  # inject still to run
    (_suff(False, True, ("g",)), True, {"inject"}, {"inject": 5.0}, ("ranking", [])),
    (_suff(False, True, ("g",)), True, {"inject"}, {"inject": 1.0}, ("unexplained", [])),
    (Sufficiency(Rating(False), Rating(None)), True, set(), {}, ("unexplained", [])),
    (_suff(True, needed=("c",)), True, {"position", "k-sweep@3", "drop-distractors"},
     {"position": 5.0, "k-sweep@3": 1.0, "drop-distractors": 5.0}, ("position", ["distractors"])),
    (_suff(True, needed=("c",)), True, {"position", "k-sweep@3"}, {"position": 1.0, "k-sweep@3": 5.0},
     ("context-size", [])),
    (_suff(True, needed=("c",)), True, {"drop-distractors"}, {"drop-distractors": 4.0}, ("distractors", [])),
    (_suff(True, needed=("c",)), True, {"drop-distractors"}, {"drop-distractors": 1.0}, ("over-abstains", [])),
    (_suff(True, needed=("c",)), False, {"drop-distractors"}, {"drop-distractors": 1.0}, ("generator", [])),
])
def test_reference_free_tree(suff, abstained, planned, grades, expected):
    assert free_cause(_ev(grades, planned), suff, abstained) == expected


def test_new_causes_have_fixes_and_rest_on_sufficient_context():
    for cause in ("unsupported", "over-abstains"):
        assert cause in CAUSES and FIXES[cause]
    ev = _ev({}, set())
    assert evidence_of(ev, "retrieval-miss", references=False) == ["sufficient-context"]
    # the qrels tree never names them
    plain = Evidence(False, True, True, 5, 3.0, set(), {BASELINE: 1.0}, judge=True)
    assert decide(plain) == ("unexplained", [])
