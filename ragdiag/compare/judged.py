"""The judged loop of ``compare --sequential``: answer and grade both sides batch by batch, in the gate's
seeded random order, and stop once every metric is decided.

Both sides answer the same questions (one texts file) from their own ranked file at one cut-off K; each
batch is generated and graded through the answer engine (:func:`ragdiag.answers.runs.generate` and
:func:`~ragdiag.answers.runs.grade`: cache, batch API, retries), the answers handed to the judge in memory
as ``pipeline`` hands them. After each batch the sequential gate (:func:`ragdiag.compare.sequential_gate.run`)
is replayed on the queries judged so far, tuned for the planned number of queries (so the decision and its
n are those of ``compare --sequential`` over the same grades of every query). A query costs at most
:data:`CALLS_PER_QUERY` new calls; ``max_calls`` is checked against a batch's worst case before it is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerSettings
from ragdiag.compare.gate import GateOptions, gate
from ragdiag.compare.inputs import MIN_QUERIES, Paired
from ragdiag.compare.sequential_gate import SequentialOptions, replay_order
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.results.compare import CompareResult

CALLS_PER_QUERY = 5  # one ideal answer (shared by both sides through the cache), two top-K answers, two grades


def calls_per_query(config: ClientConfig) -> int:
    """The worst case of one question: :data:`CALLS_PER_QUERY`, one more when no cache shares the ideal answer."""
    return CALLS_PER_QUERY + (1 if config.cache in ("off", "refresh") else 0)


@dataclass(frozen=True)
class JudgedSides:
    """The questions and the two rankings of them, judged at cut-off ``k``."""

    texts: Loaded[TextsSample]
    base: Loaded[RankedSample]
    new: Loaded[RankedSample]
    k: int


@dataclass(frozen=True)
class JudgedOptions:
    batch_size: int = 10
    max_calls: int | None = None
    dataset: str = "all"
    answer: AnswerSettings = AnswerSettings()
    grading: GradingOptions = GradingOptions()
    progress: bool = False


def query_ids(sides: JudgedSides) -> list[str]:
    """The questions both rankings answer at K (Nc ≥ K, with a texts sample), in the base file's order (the
    order ``grade`` writes them, hence the order ``compare`` reads their graded files in)."""
    texts = {s.id for s in sides.texts.samples}

    def usable(ranked: Loaded[RankedSample]) -> list[str]:
        return [r.id for r in ranked.samples if r.id in texts and r.Nc >= sides.k]

    base, new = usable(sides.base), set(usable(sides.new))
    if set(base) != new:
        only = sorted(set(base) ^ new)
        raise RagdiagError(f"--base-ranked {sides.base.source} and --new-ranked {sides.new.source} answer different "
                           f"questions at K = {sides.k} ({len(only)} in one only, first: {', '.join(only[:3])}); "
                           "give two rankings of the same questions, each with at least K candidates")
    if len(base) < MIN_QUERIES:
        raise RagdiagError(f"{len(base)} questions have a texts sample and at least K = {sides.k} ranked candidates; "
                           f"compare needs at least {MIN_QUERIES}")
    return base


def _subset(loaded: Loaded[RankedSample], ids: set[str]) -> Loaded[RankedSample]:
    return Loaded([r for r in loaded.samples if r.id in ids], loaded.source, loaded.sha256)


def _grades(texts: Loaded[TextsSample], ranked: Loaded[RankedSample], k: int, config: ClientConfig,
            o: JudgedOptions, notice: Callable[[str], None]) -> tuple[dict[str, float], int, int]:
    """One side's batch: answer at K, grade; each query's grade (mean of the repeats) and the new and
    cached (or shared in flight) calls of both steps."""
    from ragdiag.answers.answers_file import AnswersFile
    from ragdiag.answers.runs import Samples, generate, grade

    inputs = {"texts": {"source": texts.source, "sha256": texts.sha256},
              "ranked": {"source": ranked.source, "sha256": ranked.sha256}}  # as generate's answers meta names them
    samples = Samples({s.id: s for s in texts.samples}, ranked.samples, ranked.source, texts.source, inputs)
    gate_ = o.grading.gate()
    answered = generate(samples, [k], o.dataset, config, gate_, o.answer, o.progress, notice)
    source = Path(ranked.source)
    answers = AnswersFile.from_rows(answered.meta.to_json(), answered.rows, source)
    graded = grade(answers, source, ranked.sha256, config, [config.model], 1, gate_, o.grading.grade_mode,
                   o.grading.top_logprobs, o.grading.keep_degenerate, True, o.answer.lang, o.progress)
    values: dict[str, float] = {}
    for row in graded.graded:
        repeats = [g for g in row.get("grades") or [] if g is not None]
        values[str(row["id"])] = float(np.mean(repeats)) if repeats else (
            float(row["grade"]) if row.get("grade") is not None else float("nan"))
    stats = [answered.summary.stats, graded.summary.stats]
    return values, sum(s.calls for s in stats), sum(s.cache_hits + s.shared for s in stats)


def _paired(ids: list[str], base: dict[str, float], new: dict[str, float]) -> Paired:
    column = lambda values: np.array([[values.get(q, np.nan)] for q in ids])  # noqa: E731
    return Paired("graded", list(ids), ["grade"], column(base), column(new), [False], {"base_only": 0, "new_only": 0})


def judged_loop(sides: JudgedSides, config: ClientConfig, gate_options: GateOptions, seq: SequentialOptions,
                o: JudgedOptions, meta: dict[str, Any], notice: Callable[[str], None]) -> CompareResult:
    """Judge batches in the seeded order until every metric is decided, ``max_queries`` or ``max_calls``."""
    ids = query_ids(sides)
    available = len(ids)
    limit = available if seq.max_queries is None else min(seq.max_queries, available)
    order = [ids[i] for i in replay_order(available, gate_options.seed)[:limit]]
    per_query = calls_per_query(config)
    cap = "" if o.max_calls is None else f"; --max-calls {o.max_calls} is a hard cap on each batch's worst case"
    notice(f"judged loop: up to {limit} of {available} questions in a random order (seed {gate_options.seed}), "
           f"judged in batches of {o.batch_size} at K = {sides.k}; cost before any call: at most {per_query} new "
           f"LLM calls per question (an ideal answer{'' if per_query == CALLS_PER_QUERY else ' per side'}, two answers, "
           f"two grades), at most {per_query * limit} "
           f"for all of them; the cache pays for the calls it holds{cap}")
    first_look = seq.burn_in if seq.sequence == "asymptotic" else MIN_QUERIES
    tuned = replace(seq, planned=limit, max_queries=None)
    base: dict[str, float] = {}
    new: dict[str, float] = {}
    paid = cached = 0
    result: CompareResult | None = None
    stopped_by = "max-queries" if limit < available else "all queries"
    seen: set[str] = set()

    def once(line: str) -> None:  # the same notice from every batch is said once
        if line not in seen:
            seen.add(line)
            notice(line)

    for start in range(0, limit, o.batch_size):
        batch = order[start:start + o.batch_size]
        worst = per_query * len(batch)
        if o.max_calls is not None and paid + worst > o.max_calls:
            if result is None:
                raise RagdiagError(f"--max-calls {o.max_calls}: the judged loop needs up to {worst} new calls for its "
                                   f"next batch ({paid} paid so far) before its first look at {first_look} queries; "
                                   f"{'nothing was sent; ' if paid == 0 else ''}raise --max-calls or lower --batch-size")
            stopped_by = "max-calls"
            break
        wanted = set(batch)
        for side, grades in ((sides.base, base), (sides.new, new)):
            got, calls, hits = _grades(sides.texts, _subset(side, wanted), sides.k, config, o, once)
            grades.update(got)
            paid, cached = paid + calls, cached + hits
        judged = order[:start + len(batch)]
        if len(judged) < min(first_look, limit):
            continue
        result = gate(_paired(judged, base, new), gate_options, dict(meta), tuned, np.arange(len(judged)))
        assert result.sequential is not None
        if all(m.decided_at is not None for m in result.sequential.metrics):
            stopped_by = "decision"
            break
    if result is None:
        raise RagdiagError(f"the judged loop stopped after {len(base)} questions, before its first look at "
                           f"{first_look}; raise --max-queries or --max-calls")
    assert result.sequential is not None
    run = result.sequential
    judged_n = len(base)
    # the new side asks for the ideal answers the base side just got: replayed, not counted (a cold fixed plan pays once)
    reused = min(judged_n, cached) if per_query == CALLS_PER_QUERY else 0
    cached -= reused
    used = paid + cached
    fixed = round(used * available / judged_n)
    run.available, run.max_queries = available, limit
    run.calls = {"paid": paid, "from_cache": cached, "ideal_reused": reused, "requests": used, "questions_judged": judged_n, "fixed_plan": fixed,
                 "saved": fixed - used, "upper_bound": per_query * limit, "max_calls": o.max_calls,
                 "batch_size": o.batch_size, "stopped_by": stopped_by}
    result.meta["queries"] = available
    return result
