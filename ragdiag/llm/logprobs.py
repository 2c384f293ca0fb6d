"""Probability-weighted grades from the judge's first-token log-probabilities (G-Eval).

Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment" (EMNLP 2023),
§2: score = Σ_i p(s_i) · s_i over the possible scores s_i. Here the judge is asked for one token
(``max_tokens=1``, ``logprobs=True``, ``top_logprobs=N``); the probabilities of the tokens that
read as the digits 1–5 (surrounding spaces ignored, the same digit's variants summed) are
renormalised over those digits: p_d = exp(lp_d) / Σ_{d'∈1..5} exp(lp_d'), and the grade is the
expected value E[g] = Σ_d d · p_d. Digits missing from the top N get probability 0.

A logprob reply is kept in the call cache as the JSON ``{"content": …, "top_logprobs": [{"token",
"logprob"}, …]}`` (the request's ``logprobs`` parameters are in its cache key).
"""

from __future__ import annotations

import json
import math
from typing import Any

from ragdiag.errors import RagdiagError

DIGITS = (1, 2, 3, 4, 5)


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
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
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
            and isinstance(t.get("logprob"), (int, float)) and not isinstance(t.get("logprob"), bool)
            and math.isfinite(t["logprob"])]
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


def digit_probabilities(top_logprobs: list[dict[str, Any]]) -> list[float] | None:
    """[p_1, …, p_5] renormalised over the digit tokens among ``top_logprobs``; None when there is no digit."""
    mass = dict.fromkeys(DIGITS, 0.0)
    for entry in top_logprobs:
        token = str(entry.get("token", "")).strip()
        if token in {str(d) for d in DIGITS}:
            mass[int(token)] += math.exp(float(entry["logprob"]))
    total = sum(mass.values())
    if total <= 0:
        return None
    return [mass[d] / total for d in DIGITS]


def expected_grade(probs: list[float]) -> float:
    """E[g] = Σ_d d · p_d over the digits 1–5."""
    return float(sum(d * p for d, p in zip(DIGITS, probs)))
