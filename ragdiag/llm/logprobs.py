"""Probability-weighted grades from the judge's first-token log-probabilities (G-Eval).

Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment" (EMNLP 2023),
§2: score = Σ_i p(s_i) · s_i over the possible scores s_i. Here the judge is asked for one token
(``max_tokens=1``, ``logprobs=True``, ``top_logprobs=N``); the probabilities of the tokens that
read as the digits 1–5 (surrounding spaces ignored, the same digit's variants summed) are
renormalised over those digits: p_d = exp(lp_d) / Σ_{d'∈1..5} exp(lp_d'), and the grade is the
expected value E[g] = Σ_d d · p_d. Digits missing from the top N get probability 0. The sum is taken
in log space, shifted by the largest (p_d = Σ_{t reads d} exp(lp_t − m) / Σ_{t reads a digit}
exp(lp_t − m), m = the largest digit logprob), so digits whose logprobs are all below about −745,
where ``exp`` underflows to 0, still give their distribution, and equal digits at −1e16 share it
equally; the grade is in [1, 5] by construction.

A logprob is a log-probability: a reply holding one that is NaN, infinite or above 0 (beyond
:data:`LOGPROB_SLACK` of rounding) is a broken reply (:class:`BadReply`, asked again, never cached);
a reply already cached with one yields no grade (and is asked again, like a reply without a digit).

A logprob reply is kept in the call cache as the JSON ``{"content": …, "top_logprobs": [{"token",
"logprob"}, …]}`` (the request's ``logprobs`` parameters are in its cache key).
"""

from __future__ import annotations

import json
import math
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.remote.retry import BadReply

DIGITS = (1, 2, 3, 4, 5)
LOGPROB_SLACK = 1e-6  # rounding above 0 a server may print for a certain token


class LogprobsMissing(RagdiagError):
    """The server answered without the log-probabilities that ``--grade-mode logprobs`` needs."""


def logprob_params(top_logprobs: int) -> dict[str, Any]:
    """The request parameters of a one-token logprob call."""
    return {"logprobs": True, "top_logprobs": top_logprobs, "max_tokens": 1}


def pack_reply(body: dict[str, Any], where: str) -> str:
    """The cached text of a logprob reply: its content and first-token top_logprobs as JSON.

    Raises :class:`LogprobsMissing` (one line naming ``where``) when the reply carries none.
    """
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
    top = first.get("top_logprobs")
    if not isinstance(top, list) or not top:
        raise LogprobsMissing(
            f"{where} returned no logprobs (choices[0].logprobs.content[0].top_logprobs) although the request "
            "asked for them: --grade-mode logprobs needs a server that returns logprobs; use --grade-mode digit")
    kept = [{"token": t["token"], "logprob": float(t["logprob"])} for t in top
            if isinstance(t, dict) and isinstance(t.get("token"), str)
            and isinstance(t.get("logprob"), (int, float)) and not isinstance(t.get("logprob"), bool)]
    broken = next((t for t in kept if not valid_logprob(t["logprob"])), None)
    if broken is not None:
        raise BadReply(f"token {broken['token']!r} has logprob {broken['logprob']!r}, not a log-probability (finite, <= 0)")
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    return json.dumps({"content": text, "top_logprobs": kept}, ensure_ascii=False, sort_keys=True)


def unpack_reply(text: str) -> list[dict[str, Any]]:
    """The top_logprobs list of a packed reply (empty when the text is not one)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    top = data.get("top_logprobs") if isinstance(data, dict) else None
    return top if isinstance(top, list) else []


def valid_logprob(value: Any) -> bool:
    """A finite number at most 0 (plus :data:`LOGPROB_SLACK`)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value <= LOGPROB_SLACK)


def digit_probabilities(top_logprobs: list[dict[str, Any]]) -> list[float] | None:
    """[p_1, …, p_5] renormalised over the digit tokens among ``top_logprobs`` in log space (see the
    module docstring); None when no digit is among them, or when any entry's logprob is not valid
    (:func:`valid_logprob`: a broken reply, e.g. cached by an earlier version)."""
    digits = {str(d): d for d in DIGITS}
    logs: dict[int, list[float]] = {d: [] for d in DIGITS}
    for entry in top_logprobs:
        if not isinstance(entry, dict) or not valid_logprob(entry.get("logprob")):
            return None
        token = str(entry.get("token", "")).strip()
        if token in digits:
            logs[digits[token]].append(float(entry["logprob"]))
    if not any(logs.values()):
        return None
    top = max(lp for v in logs.values() for lp in v)
    # shifted by the largest first: the best token's weight is exactly 1, so nothing is lost to the
    # magnitude of m (at m = -1e16, m + log 5 == m in float64); a digit's variants are summed
    weights = [math.fsum(math.exp(lp - top) for lp in logs[d]) for d in DIGITS]
    total = math.fsum(weights)
    return [w / total for w in weights]


def expected_grade(probs: list[float]) -> float:
    """E[g] = Σ_d d · p_d / Σ_d p_d over the digits 1–5, held to [1, 5] against the last bit of rounding."""
    mean = math.fsum(d * p for d, p in zip(DIGITS, probs)) / math.fsum(probs)
    return min(float(DIGITS[-1]), max(float(DIGITS[0]), mean))
