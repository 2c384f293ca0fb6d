"""A deterministic listwise test judge with known noise (127.0.0.1 only), for ``label --refine``.

Every test passage carries its hidden true utility as ``[utility 0.731]`` in its text. The server:

- answers utility-label prompts (a single ``<passage>``) with ``{"grade": g}``,
  g = clip(round(1 + 4·u + ε), 1, 5);
- answers listwise-rank prompts (``<passage id="N">`` elements) with ``{"ranking": [...]}``, the
  passages sorted by u + ε;

ε ~ Normal(0, ``sigma``) drawn from a generator seeded by the sha256 of the request's messages, so
a request always gets the same reply (the cache and replays stay consistent) while different
batches see independent noise. These are test-server replies, never an LLM's judgement.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np

from tests.servers.chat_server import ChatServer

_UTILITY = re.compile(r"\[utility (-?\d+(?:\.\d+)?)\]")
_NUMBERED = re.compile(r'<passage id="(\d+)">(.*?)</passage>', re.DOTALL)


def noise_rng(messages: list[dict[str, Any]]) -> np.random.Generator:
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def noisy_ranking(utilities: list[float], sigma: float, rng: np.random.Generator) -> list[int]:
    """Positions (0-based) sorted by utility + noise, best first."""
    noisy = np.asarray(utilities) + rng.normal(0.0, sigma, len(utilities))
    return [int(i) for i in np.argsort(-noisy, kind="stable")]


class ListwiseJudgeServer(ChatServer):
    def __init__(self, sigma: float = 0.3, grade_sigma: float = 0.8) -> None:
        super().__init__()
        self.sigma = sigma
        self.grade_sigma = grade_sigma
        self.listwise_calls = 0

    def _text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        user = str(messages[-1].get("content", "")) if messages else ""
        first_user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), user)
        rng = noise_rng(messages)
        numbered = _NUMBERED.findall(first_user)
        if len(numbered) > 1:
            with self._lock:
                self.listwise_calls += 1
            utilities = [float(_UTILITY.search(text).group(1)) for _, text in numbered]
            order = noisy_ranking(utilities, self.sigma, rng)
            return json.dumps({"ranking": [int(numbered[i][0]) for i in order]})
        found = _UTILITY.search(first_user)
        if found:
            grade = int(np.clip(round(1 + 4 * float(found.group(1)) + rng.normal(0.0, self.grade_sigma)), 1, 5))
            return json.dumps({"grade": grade, "reason": "test server: hidden utility plus known noise"})
        return super()._text(body)
