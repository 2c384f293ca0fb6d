"""Strict judge-reply parsing: JSON grade or a bare digit, nothing else."""

from __future__ import annotations

import pytest

from ragdiag.answers.grade_parse import parse_grade


@pytest.mark.parametrize("reply, grade", [
    ('{"grade": 4, "reason": "ok"}', 4),
    ('{"grade": 1}', 1),
    ('{"grade": 5.0}', 5),
    ("```json\n{\"grade\": 3, \"reason\": \"x\"}\n```", 3),
    ("4", 4),
    (" 2.\n", 2),
])
def test_accepted(reply, grade):
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("reply", [
    "I'd say four out of five", "{}", '{"reason": "fine"}', '{"grade": 6}', '{"grade": 0}', '{"grade": 3.5}',
    '{"grade": "4"}', '{"grade": true}', "The answer is good. Grade: 4", "45", "", "[4]",
    'Sure! {"grade": 4}',
])
def test_rejected(reply):
    assert parse_grade(reply) is None
