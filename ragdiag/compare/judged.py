"""The judged loop of ``compare --sequential``: answer and grade both sides batch by batch, in the gate's
seeded random order, and stop once every metric is decided.

Both sides answer the same questions (one texts file) at one cut-off K: from two ranked files (two
retrievers; or two retrievers ranking one corpus, :mod:`ragdiag.compare.judged_corpus`), or from one ranked
file by two models (``--new-model``) or two generation prompts (``--base-prompt`` / ``--new-prompt``,
:mod:`ragdiag.compare.judged_prompt`), or several of these. Who does what
(:class:`JudgedModels`): the judge model (``--judge-model``, default ``--model``) writes each question's
ideal answer from its positive passages, once per question, and grades both sides' answers against it on
1–5 with the grading prompt ``grade`` uses; the base side answers with ``--model`` and the new side with
``--new-model`` (default ``--model``), each with its side's prompt (default: the bundled generation prompt;
the ideal answers always use the default). Without a shared ground truth the two sides are thus compared on one
ruler: the same reference answer, the same judge, the same prompt. Every call goes through the answer engine
(:func:`ragdiag.answers.generation.generate_answers`, :func:`ragdiag.answers.runs.grade`: cache, batch API,
retries). After each batch the sequential gate (:func:`ragdiag.compare.sequential_gate.run`) is replayed on
the queries judged so far, tuned for the planned number of queries (so the decision and its n are those of
``compare --sequential`` over the same grades of every query). A query costs at most
:data:`CALLS_PER_QUERY` new calls; ``max_calls`` is checked against a batch's worst case before it is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.answers.generation import Row
from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerSettings
from ragdiag.compare.gate import GateOptions, gate
from ragdiag.compare.inputs import MIN_QUERIES, Paired
from ragdiag.compare.sequential_gate import SequentialOptions, replay_order
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.llm.prompts import Prompt
from ragdiag.results.compare import CompareResult

# one ideal answer (shared by both sides), two top-K answers, two grades each with at most one repair request
CALLS_PER_QUERY = 7


@dataclass(frozen=True)
class JudgedSides:
    """The questions and the two rankings of them (one file twice when two models answer), judged at cut-off ``k``."""

    texts: Loaded[TextsSample]
    base: Loaded[RankedSample]
    new: Loaded[RankedSample]
    k: int


@dataclass(frozen=True)
class JudgedModels:
    """Who answers and who grades: ``judge`` writes the ideal answers and grades both sides; ``base`` and
    ``new`` answer their sides (the same client settings, another model name), each with its generation prompt
    (None: the bundled default)."""

    judge: ClientConfig
    base: ClientConfig
    new: ClientConfig
    base_prompt: Prompt | None = None
    new_prompt: Prompt | None = None

    @classmethod
    def of(cls, config: ClientConfig, new_model: str | None = None, judge_model: str | None = None,
           base_prompt: Prompt | None = None, new_prompt: Prompt | None = None) -> JudgedModels:
        """``config`` answers the base side; ``new_model`` the new side and ``judge_model`` judges (default: ``config``'s model)."""
        def named(model: str | None) -> ClientConfig:
            return config if model is None or model == config.model else replace(config, model=model)

        return cls(named(judge_model), config, named(new_model), base_prompt, new_prompt)

    @property
    def two_models(self) -> bool:
        return self.base.model != self.new.model

    def notices(self) -> list[str]:
        """What a reader of a model comparison should know about who grades whom."""
        if not self.two_models:
            return []
        line = (f"two models answer the same passages: base {self.base.model}, new {self.new.model}; "
                f"{self.judge.model} writes the ideal answers and grades both sides against them")
        own = [side for side, config in (("base", self.base), ("new", self.new)) if config.model == self.judge.model]
        if own:
            line += (f" (it also answers the {own[0]} side, and a judge may favour its own answers: --judge-model "
                     "names a third model)")
        return [line]


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


def _answer(rows: list[Row], texts: dict[str, TextsSample], config: ClientConfig, o: JudgedOptions,
            notice: Callable[[str], None], prompt: Prompt | None = None) -> tuple[int, int]:
    """Answer ``rows`` in place through one client of ``config`` (the engine's generation, as ``generate``
    asks; ``prompt`` for every language, default the bundled ones); its new and cached (or shared in flight) calls."""
    from ragdiag.answers.generation import generate_answers, plan_lines
    from ragdiag.answers.plan import AnswerPlan
    from ragdiag.llm.client import LLMClient

    client = LLMClient(config)
    try:
        plan = AnswerPlan.resolve(o.answer, client, prompt=prompt)
        generate_answers(texts, rows, client, o.progress, plan)
        for line in [*plan.notices, *plan_lines(plan, rows, o.answer)]:
            notice(line)
        stats = client.stats
        return stats.calls, stats.cache_hits + stats.shared
    finally:
        client.close()


def _grade(ideal: list[Row], answered: list[Row], ranked: Loaded[RankedSample], judge: ClientConfig,
           o: JudgedOptions) -> tuple[dict[str, float], int, int]:
    """Grade one side's answers against the ideal answers, as ``grade`` grades an answers file; each query's
    grade (mean of the repeats) and the new and cached calls."""
    from ragdiag.answers.answers_file import AnswersFile
    from ragdiag.answers.runs import grade

    source = Path(ranked.source)
    answers = AnswersFile.from_rows({"command": "compare --sequential (judged loop)"}, [*ideal, *answered], source)
    g = o.grading
    graded = grade(answers, source, ranked.sha256, judge, [judge.model], 1, g.gate(), g.grade_mode, g.top_logprobs,
                   g.keep_degenerate, True, o.answer.lang, o.progress)
    values: dict[str, float] = {}
    for row in graded.graded:
        repeats = [x for x in row.get("grades") or [] if x is not None]
        values[str(row["id"])] = float(np.mean(repeats)) if repeats else (
            float(row["grade"]) if row.get("grade") is not None else float("nan"))
    stats = graded.summary.stats
    return values, stats.calls, stats.cache_hits + stats.shared


def _judge_batch(batch: list[str], sides: JudgedSides, models: JudgedModels, o: JudgedOptions,
                 notice: Callable[[str], None]) -> tuple[dict[str, float], dict[str, float], int, int]:
    """One batch: the ideal answers once (judge), each side's top-K answers (its model), both sides graded
    (judge); the base and new grades and the new and cached calls."""
    from ragdiag.answers.generation import topk_rows

    texts = {s.id: s for s in sides.texts.samples}
    wanted = set(batch)
    ideal: list[Row] = [{"kind": "ideal", "id": q, "q": texts[q].q} for q in dict.fromkeys(batch)]
    paid, cached = _answer(ideal, texts, models.judge, o, notice)
    grades = []
    for ranked, config, prompt in ((sides.base, models.base, models.base_prompt),
                                   (sides.new, models.new, models.new_prompt)):
        rows = topk_rows(texts, [r for r in ranked.samples if r.id in wanted], [sides.k], ranked.source)
        calls, hits = _answer(rows, texts, config, o, notice, prompt)
        got, graded_calls, graded_hits = _grade(ideal, rows, ranked, models.judge, o)
        grades.append(got)
        paid, cached = paid + calls + graded_calls, cached + hits + graded_hits
    return grades[0], grades[1], paid, cached


def _paired(ids: list[str], base: dict[str, float], new: dict[str, float]) -> Paired:
    column = lambda values: np.array([[values.get(q, np.nan)] for q in ids])  # noqa: E731
    return Paired("graded", list(ids), ["grade"], column(base), column(new), [False], {"base_only": 0, "new_only": 0})


def judged_loop(sides: JudgedSides, models: JudgedModels, gate_options: GateOptions, seq: SequentialOptions,
                o: JudgedOptions, meta: dict[str, Any], notice: Callable[[str], None]) -> CompareResult:
    """Judge batches in the seeded order until every metric is decided, ``max_queries`` or ``max_calls``."""
    ids = query_ids(sides)
    available = len(ids)
    limit = available if seq.max_queries is None else min(seq.max_queries, available)
    order = [ids[i] for i in replay_order(available, gate_options.seed)[:limit]]
    if seq.sequence == "asymptotic" and limit < seq.burn_in:  # no look would ever come: refused before any call
        raise RagdiagError(f"the judged loop would stop after {limit} questions, before the asymptotic sequence's first "
                           f"look at --burn-in {seq.burn_in}; lower --burn-in, raise --max-queries, or use --sequence "
                           "betting")
    per_query = CALLS_PER_QUERY
    for line in models.notices():
        notice(line)
    cap = "" if o.max_calls is None else f"; --max-calls {o.max_calls} is a hard cap on each batch's worst case"
    notice(f"judged loop: up to {limit} of {available} questions in a random order (seed {gate_options.seed}), "
           f"judged in batches of {o.batch_size} at K = {sides.k}; cost before any call: at most {per_query} new "
           f"LLM calls per question (an ideal answer, two answers, two grades, each grade with at most one repair), "
           f"at most {per_query * limit} "
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
        got_base, got_new, calls, hits = _judge_batch(batch, sides, models, o, once)
        base.update(got_base)
        new.update(got_new)
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
    used = paid + cached
    fixed = round(used * available / judged_n)
    run.available, run.max_queries = available, limit
    run.calls = {"paid": paid, "from_cache": cached, "requests": used, "questions_judged": judged_n, "fixed_plan": fixed,
                 "saved": fixed - used, "upper_bound": per_query * limit, "max_calls": o.max_calls,
                 "batch_size": o.batch_size, "stopped_by": stopped_by}
    result.meta["queries"] = available
    return result
