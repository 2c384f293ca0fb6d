"""``ragdiag testset`` as one computation: sample passages, have the model write a query and its
reference answer for each, drop what the filters catch, optionally grade a pool per kept query with
``label``'s judge, and return the test collection in memory (``commands/testset.py`` writes it).

Order: the replies are parsed (unusable ones counted), then the free checks run on every parsed
candidate — language, copy, consistency, dedupe — and the paid answerable judgement on those that
passed them (the reference gate's degenerate kinds dropped with it). Each filter counts what it
flagged with examples. Every phase counts its uncached calls before sending any and refuses when they
exceed what is left of ``--max-calls``; what was paid is in the cache, so a rerun resumes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import LLMClient
from ragdiag.testset import filters as f
from ragdiag.testset.generate import (
    Candidate,
    Example,
    judge_requests,
    parse_judgement,
    parse_reply,
    question_request,
    uncached,
)
from ragdiag.testset.passages import Passage

__all__ = ["FILTERS", "BuildOptions", "Built", "build", "call_plan"]

FILTERS = ("consistency", "answerable", "dedupe", "copy")
EXAMPLES_PER_FILTER = 3


@dataclass(frozen=True)
class BuildOptions:
    filters: tuple[str, ...] = FILTERS
    consistency_k: int = 10
    consistency_index: Any = None  # an index folder (ragdiag index build): its dense index replaces BM25
    copy_n: int = 4
    copy_max: float = 0.5
    dedupe_threshold: float = 0.9
    dedupe_embedder: Any = None  # a loaded embedder (encode): embedding cosine instead of character 3-gram TF-IDF
    label_pool: int | None = None
    pool: str = "dense:local,bm25"
    max_calls: int | None = None


@dataclass
class Built:
    """The candidates (every sampled passage, with its reply and flags), the qrels of the kept ones,
    the counts per filter and the calls per phase."""

    candidates: list[Candidate]
    qrels: dict[str, dict[str, int]]
    counts: dict[str, dict[str, Any]]
    phases: dict[str, int] = field(default_factory=dict)

    def kept(self) -> list[tuple[str, Candidate]]:
        return [(query_id(i), c) for i, c in enumerate(self.candidates) if c.kept]


def query_id(index: int) -> str:
    """The id of the query written from the ``index``-th sampled passage (stable across reruns)."""
    return f"ts{index:05d}"


def call_plan(client: LLMClient, passages: list[Passage], examples: list[Example], options: BuildOptions) -> dict[str, int]:
    """Before any call: the question calls not in the cache, and upper bounds of the judge calls (one
    per question) and label calls (up to K per pool retriever per question)."""
    sources = len([s for s in options.pool.split(",") if s.strip()])
    return {"questions": uncached(client, [question_request(client, p, examples) for p in passages]),
            "answerable_at_most": len(passages) if "answerable" in options.filters else 0,
            "label_at_most": len(passages) * sources * options.label_pool if options.label_pool else 0}


def _check_budget(client: LLMClient, phase: str, needed: int, options: BuildOptions, paid: int) -> None:
    if options.max_calls is not None and paid + needed > options.max_calls:
        raise RagdiagError(f"--max-calls {options.max_calls}: the {phase} need {needed} new LLM calls and {paid} were "
                           f"already made; nothing more was sent. The calls made are cached: rerun with --max-calls "
                           f"{paid + needed} or more to resume")


def _flag(counts: dict[str, dict[str, Any]], name: str, c: Candidate, reason: str, detail: dict[str, Any]) -> None:
    c.flags[name] = reason
    entry = counts[name]
    entry["flagged"] += 1
    if len(entry["examples"]) < EXAMPLES_PER_FILTER:
        entry["examples"].append({"doc_id": c.passage.doc_id, "question": c.question, "reason": reason, **detail})


def _free_filters(candidates: list[Candidate], doc_ids: list[str], doc_texts: list[str], options: BuildOptions,
                  counts: dict[str, dict[str, Any]], cache_dir: Any) -> None:
    parsed = [c for c in candidates if c.problem is None]
    counts["language"]["examined"] = len(parsed)
    for c in parsed:
        if not f.language_ok(c.question or "", c.passage.lang):
            _flag(counts, "language", c, f"question not in the passage's language ({c.passage.lang})", {})
    if "copy" in options.filters:
        counts["copy"]["examined"] = len(parsed)
        for c, score in zip(parsed, f.copy_scores([c.question or "" for c in parsed], [c.passage.text for c in parsed],
                                                  options.copy_n), strict=True):
            if score > options.copy_max:
                _flag(counts, "copy", c, f"{score:.2f} of its word {options.copy_n}-grams are in the passage",
                      {"copied_share": round(score, 4)})
    if "consistency" in options.filters and parsed:
        questions = [c.question or "" for c in parsed]
        if options.consistency_index is None:
            search, name = _bm25_search(doc_ids, doc_texts, parsed, options.consistency_k), "BM25"
        else:
            search, name = _dense_search(options.consistency_index, questions, options.consistency_k, cache_dir), "the dense index"
        counts["consistency"]["examined"] = len(parsed)
        ranks = f.round_trip_ranks(questions, [c.passage.doc_id for c in parsed], search)
        for c, rank in zip(parsed, ranks, strict=True):
            if rank is None:
                _flag(counts, "consistency", c, f"source document not in {name}'s top {options.consistency_k}", {})
    if "dedupe" in options.filters:
        counts["dedupe"]["examined"] = len(parsed)
        questions = [c.question or "" for c in parsed]
        vectors = None
        if options.dedupe_embedder is not None:
            vectors = options.dedupe_embedder.encode(questions, progress=False)
        for c, dup in zip(parsed, f.duplicate_of(questions, options.dedupe_threshold, vectors), strict=True):
            if dup is not None:
                earlier = parsed[dup[0]]
                _flag(counts, "dedupe", c, f"cosine {dup[1]:.3f} with an earlier question",
                      {"duplicate_of": earlier.question})


def _bm25_search(doc_ids: list[str], doc_texts: list[str], parsed: list[Candidate], k: int) -> Callable[[str], list[str]]:
    from ragdiag.retrieval.bm25 import Bm25Config, BM25Index

    lang = Counter(c.passage.lang for c in parsed).most_common(1)[0][0]
    index = BM25Index.build(doc_texts, Bm25Config(lang=lang), source="--corpus")
    return lambda question: [doc_ids[r] for r in index.top_k(question, k)[0]]


def dense_index(folder: Any, k: int, doc_ids: list[str]) -> Any:
    """The index folder's dense index, opened and checked before any call; its documents must be the corpus's."""
    from pathlib import Path

    from ragdiag.retrieval.search import RetrieveOptions, open_checked

    store = open_checked(RetrieveOptions(index=Path(folder), queries=Path("-"), out=Path("-"), k=k, mode="dense"))
    if set(store.doc_ids) != set(doc_ids):
        missing = sorted(set(doc_ids) - set(store.doc_ids))
        raise RagdiagError(f"--consistency-index {folder}: built over other documents than --corpus "
                           f"({len(store.doc_ids)} ids, {len(missing)} corpus ids absent"
                           + (f", first '{missing[0]}'" if missing else "") + "); build it from the same corpus")
    return store


def _dense_search(folder: Any, questions: list[str], k: int, cache_dir: Any) -> Callable[[str], list[str]]:
    """Top ``k`` documents of the dense index for every question (embedded through the cache)."""
    from pathlib import Path

    from ragdiag.retrieval.search import RetrieveOptions, open_checked, rank

    opts = RetrieveOptions(index=Path(folder), queries=Path("-"), out=Path("-"), k=k, mode="dense", cache_dir=cache_dir)
    ranked, _ = rank(open_checked(opts), opts, questions)
    found = {q: [d for d, _ in pairs] for q, pairs in zip(questions, ranked, strict=True)}
    return lambda question: found[question]


def _answerable(client: LLMClient, candidates: list[Candidate], options: BuildOptions, counts: dict[str, dict[str, Any]],
                paid: int, progress: bool) -> int:
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.llm.runner import run_items

    todo = [c for c in candidates if c.problem is None and not c.flags]
    counts["answerable"]["examined"] = len(todo)
    kinds = make_gate(languages=sorted({c.passage.lang for c in todo}) or None).classify(
        [c.answer for c in todo], [c.question for c in todo])
    for c, kind in zip(todo, kinds, strict=True):
        if kind is not None:
            _flag(counts, "answerable", c, f"degenerate reference answer ({kind})", {})
    todo = [c for c in todo if not c.flags]
    requests = judge_requests(client, todo)
    needed = uncached(client, requests)
    _check_budget(client, "answerable judgements", needed, options, paid)
    outcome = run_items(client, lambda r: client.chat(r, "answerable").text, requests,
                        [c.passage.key for c in todo], "answerable", progress)
    for c, reply, error in zip(todo, outcome.results, outcome.errors, strict=True):
        verdict = parse_judgement(reply) if reply is not None else None
        if verdict is None:
            _flag(counts, "answerable", c, "judge reply unusable" if reply is not None else f"judge call failed: {error}",
                  {"reply": reply})
        elif not all(verdict):
            what = "does not answer the question" if not verdict[0] else "does not support the answer"
            _flag(counts, "answerable", c, f"judge: the passage {what}", {"reply": reply})
    return needed


def build(client: LLMClient, passages: list[Passage], examples: list[Example], doc_ids: list[str], doc_texts: list[str],
          options: BuildOptions, cache_dir: Any, progress: bool) -> Built:
    """Generate, filter and (with ``label_pool``) grade; see the module."""
    from ragdiag.llm.runner import run_items

    counts: dict[str, dict[str, Any]] = {name: {"examined": 0, "flagged": 0, "examples": []}
                                         for name in ("language", *FILTERS)}
    requests = [question_request(client, p, examples) for p in passages]
    phases = {"questions": uncached(client, requests)}
    _check_budget(client, "questions", phases["questions"], options, 0)
    outcome = run_items(client, lambda r: client.chat(r, "testset question").text, requests,
                        [p.key for p in passages], "questions", progress)
    candidates = []
    for p, reply, error in zip(passages, outcome.results, outcome.errors, strict=True):
        c = Candidate(p, reply)
        parsed = parse_reply(reply) if reply is not None else f"call failed: {error}"
        if isinstance(parsed, str):
            c.problem = parsed
        else:
            c.question, c.answer = parsed
        candidates.append(c)
    if all(c.problem is not None for c in candidates):
        first = candidates[0]
        raise RagdiagError(f"no usable reply among the {len(candidates)} questions asked (first, for document "
                           f"{first.passage.doc_id}: {first.problem}; reply {str(first.reply)[:120]!r}); nothing written. "
                           "Check --model and --base-url")
    _free_filters(candidates, doc_ids, doc_texts, options, counts, cache_dir)
    if "answerable" in options.filters:
        phases["answerable"] = _answerable(client, candidates, options, counts, phases["questions"], progress)
    kept = [(query_id(i), c) for i, c in enumerate(candidates) if c.kept]
    qrels: dict[str, dict[str, int]] = {q: {c.passage.doc_id: 1} for q, c in kept}
    if options.label_pool and kept:
        qrels, phases["label"] = _label_pool(client, kept, doc_ids, doc_texts, options, sum(phases.values()), cache_dir,
                                             progress)
    return Built(candidates, qrels, counts, phases)


def _label_pool(client: LLMClient, kept: list[tuple[str, Candidate]], doc_ids: list[str], doc_texts: list[str],
                options: BuildOptions, paid: int, cache_dir: Any, progress: bool) -> tuple[dict[str, dict[str, int]], int]:
    """Graded qrels 1–5: ``label``'s judge over the fused top ``label_pool`` of each pool retriever; the
    source passage's document is graded 5 (the judge confirmed it answers the question)."""
    from ragdiag.answers.labelling import label_pairs
    from ragdiag.evaluate.label_pool import build_pools, parse_pool
    from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
    from ragdiag.llm.prompts import load_prompt

    assert options.label_pool is not None
    ids, texts = [q for q, _ in kept], [c.question or "" for _, c in kept]
    fused, _ = build_pools(parse_pool(options.pool), doc_ids, doc_texts, ids, texts, options.label_pool, cache_dir, progress)
    pairs = [(q, d) for q, pool, (_, c) in zip(ids, fused, kept, strict=True) for d in pool if d != c.passage.doc_id]
    query_text, doc_text = dict(zip(ids, texts, strict=True)), dict(zip(doc_ids, doc_texts, strict=True))
    prompt = load_prompt("utility-label")  # the request label_pairs sends first (repeat 0), to count what it costs
    requests = [client.request(prompt.messages(query=query_text[q], passage=doc_text[d]), prompt.id, json_reply=True,
                               repeat=0, max_tokens=JUDGE_MAX_TOKENS) for q, d in pairs]
    needed = uncached(client, requests)
    _check_budget(client, "label pool grades", needed, options, paid)
    labelled = label_pairs(client, pairs, 1, query_text, doc_text, progress)
    qrels: dict[str, dict[str, int]] = {}
    for q, c in kept:
        qrels[q] = {c.passage.doc_id: 5}
    for (q, d), grade in labelled.final.items():
        qrels[q][d] = grade
    return qrels, needed
