"""G-Eval digit probabilities (:mod:`ragdiag.llm.logprobs`): log-sum-exp normalisation and broken logprobs."""

from __future__ import annotations

import math

import pytest

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
