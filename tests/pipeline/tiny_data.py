"""Tiny texts and ranked samples (docs/methods.md#1-the-retrieval-response-dataset layout) for LLM-layer tests: 4 queries, Nc=6, Np=2."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = ["volcano", "glacier", "desert", "reef"]


def texts_samples() -> list[dict]:
    samples = []
    for i, topic in enumerate(TOPICS, start=1):
        samples.append({
            "id": f"M-{i}",
            "q": f"What is known about the {topic}?",
            "p": [f"The {topic} alpha fact {i} mentions lava{i} and height{i}.",
                  f"Another {topic} beta fact {i} mentions age{i} and region{i}."],
            "n": [f"Unrelated note {j} about cooking pasta number {i}{j}." for j in range(4)],
        })
    return samples


def ranked_samples() -> list[dict]:
    orders = [[0, 1, 2, 3, 4, 5], [0, 2, 1, 3, 4, 5], [2, 3, 0, 4, 1, 5], [2, 3, 4, 5, 0, 1]]
    ranked = []
    for i, order in enumerate(orders, start=1):
        hits = [sum(1 for x in order[:k] if x < 2) for k in (2, 3, 5)]
        ranked.append({"id": f"M-{i}", "E": "AM", "Nc": 6, "Np": 2, "K": [2, 3, 5],
                       "P": [h / k for h, k in zip(hits, (2, 3, 5))], "R": [h / 2 for h in hits], "rank": order})
    return ranked


def write_tiny(folder: Path) -> tuple[Path, Path]:
    """Write samples_texts.json and samples_ranked.json (hub layout) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    texts, ranked = folder / "samples_texts.json", folder / "samples_ranked.json"
    texts.write_text(json.dumps(texts_samples()))
    ranked.write_text(json.dumps(ranked_samples()))
    return texts, ranked


def write_many(folder: Path, queries: int) -> tuple[Path, Path]:
    """``queries`` synthetic queries (Nc=6, Np=2) with rotating rankings, for larger runs."""
    folder.mkdir(parents=True, exist_ok=True)
    texts, ranked = [], []
    orders = [r["rank"] for r in ranked_samples()]
    for i in range(queries):
        texts.append({"id": f"M-{i}", "q": f"Question {i} about item{i}?",
                      "p": [f"item{i} fact one word{i}a", f"item{i} fact two word{i}b"],
                      "n": [f"noise {i} {j} filler{j}" for j in range(4)]})
        order = orders[i % len(orders)]
        hits = [sum(1 for x in order[:k] if x < 2) for k in (2, 3, 5)]
        ranked.append({"id": f"M-{i}", "E": "AM", "Nc": 6, "Np": 2, "K": [2, 3, 5],
                       "P": [h / k for h, k in zip(hits, (2, 3, 5))], "R": [h / 2 for h in hits], "rank": order})
    (folder / "samples_texts.json").write_text(json.dumps(texts))
    (folder / "samples_ranked.json").write_text(json.dumps(ranked))
    return folder / "samples_texts.json", folder / "samples_ranked.json"
