"""Texts and ranked samples with long passages (Nc=6, Np=2), for prompt-budget tests against the chat
test server's context limit; questions in English or French."""

from __future__ import annotations

import json
from pathlib import Path

ORDERS = [[0, 1, 2, 3, 4, 5], [0, 2, 1, 3, 4, 5], [2, 3, 0, 4, 1, 5], [2, 3, 4, 5, 0, 1]]


def _passage(kind: str, query: int, number: int, words: int) -> str:
    head = f"{kind}{query} fact{number} topic{query} detail{query}x{number}"
    return " ".join([head, *(f"{kind}{query}w{number}n{j}" for j in range(words))]) + "."


def long_samples(queries: int, words: list[int] | None = None, french: bool = False) -> tuple[list[dict], list[dict]]:
    """``queries`` texts samples whose passages have ``words[i]`` words (default 250 each), and their
    ranked samples (rotating orders, K = 2, 3, 5)."""
    words = words or [250] * queries
    texts, ranked = [], []
    for i in range(queries):
        question = (f"Qu'est-ce que le dossier numéro {i} et quelles sont les règles ?" if french
                    else f"What is known about record {i} and its rules?")
        texts.append({"id": f"L-{i}", "q": question,
                      "p": [_passage("alpha", i, n, words[i]) for n in range(2)],
                      "n": [_passage("noise", i, n, words[i]) for n in range(4)]})
        order = ORDERS[i % len(ORDERS)]
        hits = [sum(1 for x in order[:k] if x < 2) for k in (2, 3, 5)]
        ranked.append({"id": f"L-{i}", "E": "AM", "Nc": 6, "Np": 2, "K": [2, 3, 5],
                       "P": [h / k for h, k in zip(hits, (2, 3, 5))], "R": [h / 2 for h in hits], "rank": order})
    return texts, ranked


def write_long(folder: Path, queries: int, words: list[int] | None = None, french: bool = False) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    texts, ranked = long_samples(queries, words, french)
    (folder / "samples_texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    (folder / "samples_ranked.json").write_text(json.dumps(ranked))
    return folder / "samples_texts.json", folder / "samples_ranked.json"
