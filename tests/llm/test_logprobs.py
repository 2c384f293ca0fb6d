"""G-Eval digit probabilities (:mod:`ragdiag.llm.logprobs`): log-sum-exp normalisation and broken logprobs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.llm.logprobs import digit_probabilities, expected_grade, pack_reply, unpack_reply
from ragdiag.remote.retry import BadReply


def _body(top: list[dict]) -> dict:
    return {"choices": [{"message": {"content": top[0]["token"]},
                         "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}]}


def test_digits_far_below_exp_underflow_keep_their_distribution():
    # exp(-800) is 0.0 in float64: the plain ratio was 0/0 and the grade null
    probs = digit_probabilities([{"token": "4", "logprob": -800.0}, {"token": "2", "logprob": -801.0}])
    p4 = 1 / (1 + math.exp(-1))
    assert probs == pytest.approx([0, 1 - p4, 0, p4, 0], abs=1e-12)
    assert round(expected_grade(probs), 3) == 3.462
    three = digit_probabilities([{"token": "4", "logprob": -800.0}, {"token": " 4", "logprob": -801.0},
                                 {"token": "2", "logprob": -803.0}])
    mass4 = math.exp(0) + math.exp(-1)
    assert three == pytest.approx([0, math.exp(-3) / (mass4 + math.exp(-3)), 0, mass4 / (mass4 + math.exp(-3)), 0])


@pytest.mark.parametrize("value", [1000.0, float("nan"), float("inf"), 0.5])
def test_a_logprob_that_is_not_one_is_a_bad_reply_and_no_grade(value):
    top = [{"token": "4", "logprob": value}, {"token": "2", "logprob": -1.0}]
    with pytest.raises(BadReply, match="not a log-probability"):
        pack_reply(_body(top), "the server")
    assert digit_probabilities(top) is None  # the same entries cached by an earlier version: no grade, no crash


def test_pack_and_unpack_keep_valid_logprobs():
    top = [{"token": "4", "logprob": -0.2}, {"token": "5", "logprob": 0.0}, {"token": "3", "logprob": -9999.0}]
    assert unpack_reply(pack_reply(_body(top), "the server")) == top


def test_equal_digits_at_a_very_negative_logprob_share_the_mass():
    # round-4 regression: log-sum-exp lost log 5 at -1e16, every p was 1 and the grade 15.0
    probs = digit_probabilities([{"token": str(d), "logprob": -1e16} for d in range(1, 6)])
    assert probs == pytest.approx([0.2] * 5)
    assert expected_grade(probs) == pytest.approx(3.0)


_LOGPROB = st.one_of(st.floats(min_value=-1.7e308, max_value=0.0, allow_nan=False),
                     st.sampled_from([-1.7e308, -1e300, -1e16, -1e16 - 2.0, -745.2, -5e-324, 0.0, 1e-7]))
_TOKEN = st.sampled_from(["1", "2", "3", "4", "5", " 3", "5 ", "x", "the"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.fixed_dictionaries({"token": _TOKEN, "logprob": _LOGPROB}), min_size=1, max_size=12))
def test_probabilities_sum_to_one_and_the_grade_stays_in_1_to_5(top):
    probs = digit_probabilities(top)
    if probs is None:
        assert not any(t["token"].strip() in "12345" and t["token"].strip() for t in top)
        return
    assert all(0.0 <= p <= 1.0 for p in probs)
    assert math.fsum(probs) == pytest.approx(1.0, abs=1e-12)
    assert 1.0 <= expected_grade(probs) <= 5.0


def test_variants_of_one_digit_at_a_very_negative_logprob_add_up():
    probs = digit_probabilities([{"token": "4", "logprob": -1e16}, {"token": " 4", "logprob": -1e16},
                                 {"token": "2", "logprob": -1e16}])
    assert probs == pytest.approx([0, 1 / 3, 0, 2 / 3, 0])
