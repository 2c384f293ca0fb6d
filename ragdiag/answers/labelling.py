"""The utility judge of ``ragdiag label`` (paper 001, rag-gs stages S2–S5); writes nothing.

Pool per query: the top ``pool_depth`` of each ``--pool`` retriever, fused by RRF (c = 60; see
:mod:`ragdiag.evaluate.label_pool`). Each (query, passage) pair is judged 1–5 with the utility rubric
of ``prompts/utility-label.v1.toml`` from the passage text only (query and passage fenced); a reply
without a strict grade gets one repair request, then the grade is null — never a default. Every call
goes through the LLM cache (``--cache replay`` reruns with zero requests). With ``repeats`` > 1 each
pair is judged that many times (distinct cache entries); its grade is the lower median of the parsed
grades, with per-pair SD and Krippendorff's α (ordinal) over repeats in the manifest.

Pruning (``min_per_query``, rag-gs S5): per query, whole grade buckets are kept from 5 down to 1
until at least that many pairs are kept; kept pairs stay in fused order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ragdiag.answers.generation import Row
from ragdiag.answers.grade_parse import parse_grade
from ragdiag.llm.client import LLMClient
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt
from ragdiag.llm.runner import run_items

LabelItem = tuple[str, str, int]  # (query id, passage id, repeat)


def prune(pool: list[str], grades: dict[str, int], min_items: int) -> list[str]:
    """Keep whole grade buckets 5 → 1 until at least ``min_items`` graded pairs; fused order kept."""
    graded = [d for d in pool if d in grades]
    kept: set[str] = set()
    for grade in range(5, 0, -1):
        if len(kept) >= min_items:
            break
        kept.update(d for d in graded if grades[d] == grade)
    return [d for d in graded if d in kept]


def make_labeler(client: LLMClient, query_text: dict[str, str],
                 doc_text: dict[str, str]) -> Callable[[LabelItem], tuple[int | None, list[str]]]:
    """``label((query_id, doc_id, repeat)) -> (grade | None, replies)``: rubric prompt, one repair."""
    prompt, repair = load_prompt("utility-label"), load_prompt("utility-label-repair")

    def label(item: LabelItem) -> tuple[int | None, list[str]]:
        query_id, doc_id, repeat = item
        messages = prompt.messages(query=query_text[query_id], passage=doc_text[doc_id])
        tag = f"query {query_id} passage {doc_id} repeat {repeat}"
        first = client.chat(client.request(messages, prompt.id, json_reply=True, repeat=repeat,
                                           max_tokens=JUDGE_MAX_TOKENS), tag)
        grade = parse_grade(first.text)
        if grade is not None:
            return grade, [first.text]
        follow_up = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
        second = client.chat(client.request(follow_up, f"{prompt.id}+{repair.id}", json_reply=True, repeat=repeat,
                                            max_tokens=JUDGE_MAX_TOKENS), tag)
        return parse_grade(second.text), [first.text, second.text]

    return label


def lower_median(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]




@dataclass
class Labelled:
    """Every (query, passage) pair judged ``repeats`` times: the grade array (1, repeats, pairs; NaN where
    none), the final grade per pair (lower median), per-pair grades and SD (repeats > 1), unparsed replies,
    failed calls and seconds."""

    grades: np.ndarray
    final: dict[tuple[str, str], int]
    per_pair: list[Row] = field(default_factory=list)
    unparsed: list[Row] = field(default_factory=list)
    failures: list[Row] = field(default_factory=list)
    seconds: float = 0.0


def label_pairs(client: LLMClient, pairs: list[tuple[str, str]], repeats: int, query_text: dict[str, str],
                doc_text: dict[str, str], progress: bool) -> Labelled:
    """Judge every pair ``repeats`` times (:func:`make_labeler`); a pair's grade is the lower median of its
    parsed grades."""
    items = [(q, d, r) for q, d in pairs for r in range(repeats)]
    labeler = make_labeler(client, query_text, doc_text)
    outcome = run_items(client, labeler, items, [f"{q} {d} repeat {r}" for q, d, r in items], "labelling", progress)
    grades = np.full((1, repeats, len(pairs)), np.nan)
    unparsed: list[Row] = []
    for n, ((q, d, r), result) in enumerate(zip(items, outcome.results)):
        if result is None:
            continue
        grade, replies = result
        if grade is None:
            unparsed.append({"item": f"{q} {d} repeat {r}", "replies": replies})
        else:
            grades[0, r, n // repeats] = grade
    final: dict[tuple[str, str], int] = {}
    per_pair: list[Row] = []
    for n, (q, d) in enumerate(pairs):
        parsed = [int(g) for g in grades[0, :, n] if not np.isnan(g)]
        if parsed:
            final[(q, d)] = lower_median(parsed)
        if repeats > 1:
            per_pair.append({"query_id": q, "doc_id": d,
                             "grades": [None if np.isnan(g) else int(g) for g in grades[0, :, n]],
                             "sd": float(np.std(parsed, ddof=1)) if len(parsed) > 1 else None})
    return Labelled(grades, final, per_pair, unparsed, outcome.failures, outcome.seconds)
