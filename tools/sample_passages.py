"""Write the query-texts samples (subset M) of the bundled retrieval-response sample.

The passages are written for ragdiag, not copied from any dataset: short web-style factual
queries (``fixtures/retrieval-response-sample/source/topics.json``: 20 topics × 10 entities,
each with its own facts) and passages assembled from per-topic sentence templates filled with
those facts. For a query (topic t, entity e):

- positives (5): one *answer* sentence (a different wording of the answer in each) placed
  anywhere among 2–3 *context* sentences about e, in a seeded order, kept to 40–90 words;
- negatives (48, shuffled): 3 near misses about e that do not answer (two open with a *teaser*
  sentence restating the question, one is context only), 15 passages about other entities of
  topic t (hard negatives), 30 passages from other topics.

Every random choice comes from ``numpy.random.default_rng([seed, 0, query_index])``.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import DataError
from ragdiag.resources import resource_path

N_POSITIVES = 5
N_NEAR_MISSES = 3
N_SAME_TOPIC = 15
N_OTHER_TOPIC = 30
N_NEGATIVES = N_NEAR_MISSES + N_SAME_TOPIC + N_OTHER_TOPIC
MIN_WORDS, MAX_WORDS = 40, 90


def topics_path() -> Path:
    """The bundled facts and templates the passages are written from."""
    return resource_path("fixtures", "retrieval-response-sample", "source", "topics.json")


def load_topics(path: Path | None = None) -> list[dict[str, Any]]:
    """Topics (name, answers, teasers, context, entities), with every template field checked."""
    path = path or topics_path()
    topics = json.loads(Path(path).read_text(encoding="utf-8"))["categories"]
    for t_index, topic in enumerate(topics):
        fields = {
            name
            for template in topic["answers"] + topic["teasers"] + topic["context"]
            for _, name, _, _ in string.Formatter().parse(template)
            if name
        }
        for e_index, entity in enumerate(topic["entities"]):
            missing = fields - entity.keys()
            if missing:
                raise DataError.at(str(path), t_index, f"entities[{e_index}]", f"no value for {sorted(missing)}")
    return topics


def _words(sentences: list[str]) -> int:
    return sum(len(s.split()) for s in sentences)


def _positive(answer: str, context: list[str], rng: np.random.Generator) -> str:
    """Answer sentence anywhere among 2–3 context sentences in a seeded order, kept to 40–90 words."""
    order = [int(i) for i in rng.permutation(len(context))]
    chosen = [context[i] for i in order[: int(rng.integers(2, 4))]]
    rest = [context[i] for i in order[len(chosen) :]]
    while _words([answer, *chosen]) < MIN_WORDS and rest:
        chosen.append(rest.pop(0))
    while _words([answer, *chosen]) > MAX_WORDS and len(chosen) > 1:
        chosen.pop()
    chosen.insert(int(rng.integers(0, len(chosen) + 1)), answer)
    return " ".join(chosen)


def _near_misses(teasers: list[str], context: list[str], rng: np.random.Generator) -> list[str]:
    """Three passages about the entity that do not answer: teaser 1 + context, teaser 2 + context,
    context only (each 2–3 seeded context sentences, grown to at least 40 words)."""
    passages = []
    for opening in ([teasers[0]], [teasers[1]], []):
        order = [int(i) for i in rng.permutation(len(context))]
        chosen = opening + [context[i] for i in order[: int(rng.integers(2, 4))]]
        for i in order[len(chosen) - len(opening) :]:
            if _words(chosen) >= MIN_WORDS:
                break
            chosen.append(context[i])
        passages.append(" ".join(chosen))
    return passages


def _entity_passages(topics: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Per query, in topic-major order: topic index, query, positives and near misses."""
    items = []
    for t_index, topic in enumerate(topics):
        for entity in topic["entities"]:
            rng = np.random.default_rng([seed, 0, len(items)])
            context = [c.format(**entity) for c in topic["context"]]
            teasers = [t.format(**entity) for t in topic["teasers"]]
            answers = [topic["answers"][int(i)].format(**entity) for i in rng.permutation(len(topic["answers"]))]
            positives = [_positive(a, context, rng) for a in answers[:N_POSITIVES]]
            items.append({"topic": t_index, "q": entity["q"], "p": positives, "near": _near_misses(teasers, context, rng)})
    return items


def write_texts_samples(seed: int, topics: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Texts samples ``{"id": "M-i", "q", "p" (5), "n" (48)}`` for every query, deterministic in ``seed``."""
    items = _entity_passages(topics if topics is not None else load_topics(), seed)
    samples = []
    for index, item in enumerate(items):
        rng = np.random.default_rng([seed, 1, index])
        same = [p for j, o in enumerate(items) if j != index and o["topic"] == item["topic"] for p in o["p"] + o["near"]]
        other = [p for o in items if o["topic"] != item["topic"] for p in o["p"] + o["near"]]
        negatives = list(item["near"])
        negatives += [same[int(i)] for i in rng.choice(len(same), N_SAME_TOPIC, replace=False)]
        negatives += [other[int(i)] for i in rng.choice(len(other), N_OTHER_TOPIC, replace=False)]
        negatives = [negatives[int(i)] for i in rng.permutation(len(negatives))]
        samples.append({"id": f"M-{index}", "q": item["q"], "p": item["p"], "n": negatives})
    return samples
