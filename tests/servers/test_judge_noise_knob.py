"""The chat/toy test servers' ``judge_noise`` knob: seeded, reproducible disagreement between repeats
(test-server behaviour for demos of the judge-noise correction, never an LLM's)."""

from __future__ import annotations

import json

from tests.servers.chat_server import ChatServer, logprob_completion, shifted_grade

JUDGE = {"model": "m", "messages": [{"role": "user", "content": "Ideal answer:\nthe cat sat on the mat\n\n"
                                     "Candidate answer:\nthe cat sat\n\n"}]}


def _grades(server: ChatServer, times: int) -> list[int]:
    return [json.loads(server.reply(JUDGE)[1]["choices"][0]["message"]["content"])["grade"] for _ in range(times)]


def test_identical_requests_get_different_seeded_grades_and_off_means_unchanged():
    plain = ChatServer()
    assert len(set(_grades(plain, 5))) == 1
    first, again, other = ChatServer(), ChatServer(), ChatServer()
    for server, seed in ((first, 0), (again, 0), (other, 1)):
        server.judge_noise(1.0, seed)
    grades = _grades(first, 12)
    assert len(set(grades)) > 1 and all(1 <= g <= 5 for g in grades)
    assert _grades(again, 12) == grades  # same seed, same order: same draws
    assert _grades(other, 12) != grades


def test_shift_moves_digit_grades_within_1_to_5_and_logprob_scores():
    reply = json.dumps({"grade": 4, "reason": "overlap 0.75"})
    assert json.loads(shifted_grade(reply, 0.6))["grade"] == 5 and json.loads(shifted_grade(reply, 3.0))["grade"] == 5
    assert json.loads(shifted_grade(reply, -9.0))["grade"] == 1 and shifted_grade("an answer", 1.0) == "an answer"
    body = {"model": "m", "top_logprobs": 5, "messages": []}
    centre = logprob_completion(body, reply)["choices"][0]["message"]["content"]
    moved = logprob_completion(body, reply, shift=-2.0)["choices"][0]["message"]["content"]
    assert (centre, moved) == ("4", "2")  # score 1 + 4·0.75 = 4, shifted to 2
