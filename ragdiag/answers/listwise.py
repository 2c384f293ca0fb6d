"""The listwise LLM judge of ``label --refine``: order a batch of passages for one query.

Prompt ``listwise-rank`` (query and passages fenced, numbered 1..m in the order shown); the reply
must be ``{"ranking": [...]}`` holding every number once. Otherwise one repair request
(``listwise-rank-repair``), then the batch counts as failed — never a guessed order. Every call goes
through the LLM cache (a rerun with ``--cache replay`` sends nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ragdiag.llm.client import LLMClient
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_ranking(text: str | None, size: int) -> list[int] | None:
    """0-based positions, best first, when ``text`` holds a JSON ``ranking`` that is a permutation of 1..size."""
    match = _OBJECT.search(text or "")
    if not match:
        return None
    try:
        ranking = json.loads(match.group(0)).get("ranking")
    except (json.JSONDecodeError, AttributeError):
        return None
    if not isinstance(ranking, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in ranking):
        return None
    if sorted(ranking) != list(range(1, size + 1)):
        return None
    return [x - 1 for x in ranking]


def make_listwise_judge(client: LLMClient, query_text: str, doc_text: dict[str, str],
                        tag: str) -> Callable[[list[str]], list[str] | None]:
    """``judge(doc_ids) -> doc_ids best first | None`` for one query."""
    prompt, repair = load_prompt("listwise-rank"), load_prompt("listwise-rank-repair")

    def judge(docs: list[str]) -> list[str] | None:
        messages = prompt.messages(query=query_text, passages=[doc_text[d] for d in docs])
        first = client.chat(client.request(messages, prompt.id, json_reply=True, max_tokens=JUDGE_MAX_TOKENS),
                            f"{tag} batch {','.join(docs)}")
        order = parse_ranking(first.text, len(docs))
        if order is None:
            follow_up = [*messages, {"role": "assistant", "content": first.text or ""}, *repair.messages()]
            second = client.chat(client.request(follow_up, f"{prompt.id}+{repair.id}", json_reply=True,
                                                max_tokens=JUDGE_MAX_TOKENS),
                                 f"{tag} batch {','.join(docs)} (repair)")
            order = parse_ranking(second.text, len(docs))
        return None if order is None else [docs[i] for i in order]

    return judge
