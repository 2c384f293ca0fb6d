"""The LLM judge of ``grade``: each top-K answer scored against the ideal answer (1–5); writes nothing.

Paper 003 appendix A.3 / docs/methods.md#9-generation-and-grading. Each answer is judged ``repeats`` times by each judge model
(the repeat index is in the cache key, so repeats are distinct calls). A reply without a grade
gets one repair request; if that holds no grade either, the grade is missing (null) and the reply
is kept — never a default. ``grade`` is the mean of the first judge's parsed grades.

``grade_mode="logprobs"`` asks for one token with its top logprobs instead (prompt
``grading-logprobs``, no repair): each repeat's grade is the expected value over the digits 1–5
(:mod:`ragdiag.llm.logprobs`), and the record keeps ``grade_probs`` (the first judge's digit
probabilities [p1..p5], averaged over its repeats) and, with repeats, ``grade_probs_repeats``.

The reference-quality gate (:mod:`ragdiag.data.reference_gate`) runs before any call: a row whose
ideal answer is degenerate is not sent to the judge (grade null, ``ideal_degenerate`` = the kind,
``skipped`` = why) unless ``keep_degenerate``; a degenerate top-K answer is graded and flagged
(``topK_degenerate``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragdiag.answers.generation import GateCounts, Row, gate_settings
from ragdiag.answers.grade_parse import parse_grade
from ragdiag.data.reference_gate import ReferenceGate, count_kinds, make_gate
from ragdiag.errors import RagdiagError
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.language import LANGS, choose_lang
from ragdiag.llm.logprobs import digit_probabilities, expected_grade, unpack_reply
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.llm.prompts import load_prompt, load_prompt_lang
from ragdiag.llm.runner import run_items

JudgeItem = tuple[Row, str, str, int]  # (row, reference answer, judge model, repeat)
Judge = Callable[[JudgeItem], "Verdict"]
GRADED_KEYS = ("id", "E", "Nc", "Np", "K", "rank", "inK", "answer_ideal", "answer_topK", "grade", "P", "R")
GRADE_MODES = ("digit", "logprobs")


@dataclass(frozen=True)
class Verdict:
    """One judge call (plus its repair, if needed): the parsed grade or None, and the replies;
    ``probs`` = [p1..p5] in logprobs mode."""

    grade: float | None
    replies: list[str] = field(default_factory=list)
    probs: list[float] | None = None


def _label(row: Row, model: str, repeat: int) -> str:
    return f"topK {row['id']} E={row['E']} Nc={row['Nc']} Np={row['Np']} K={row['K']} judge={model} repeat={repeat}"


def judge_lang(row: Row, lang: str) -> str:
    """The grading language of a row: ``lang`` when en or fr; with auto, the row's ``lang`` (written by
    generate), else the question's detected language."""
    if lang != "auto":
        return lang
    return row["lang"] if row.get("lang") in LANGS else choose_lang("auto", row["q"])



def _asking_again(ask: Callable[..., tuple[Verdict, bool]], retry_unparsed: bool, retried: list[str]) -> Judge:
    """The judge over ``ask``: a verdict without a grade whose replies all came from the cache is asked
    once more, bypassing the cache, when ``retry_unparsed`` (its label appended to ``retried``)."""
    lock = threading.Lock()

    def judge(item: JudgeItem) -> Verdict:
        row, ideal, model, repeat = item
        verdict, cached = ask(row, ideal, model, repeat, fresh=False)
        if verdict.grade is None and cached and retry_unparsed:
            with lock:
                retried.append(_label(row, model, repeat))
            verdict, _ = ask(row, ideal, model, repeat, fresh=True)
        return verdict

    return judge


def make_judge(client: ChatClient, retry_unparsed: bool = False, retried: list[str] | None = None,
               lang: str = "en") -> Judge:
    """``judge((row, ideal, model, repeat)) -> Verdict``: grading prompt in the row's language
    (:func:`judge_lang`), then one repair if needed.

    With ``retry_unparsed``, a verdict without a grade whose replies all came from the cache (an
    earlier run's prose or ``{"grade": NaN}``) is asked again, bypassing the cache, and its label is
    appended to ``retried``; a reply that parsed is never paid for twice."""
    prompts = {code: (load_prompt_lang("grading", code), load_prompt_lang("grading-repair", code)) for code in LANGS}
    asked_again: list[str] = retried if retried is not None else []

    def ask(row: Row, ideal: str, model: str, repeat: int, fresh: bool) -> tuple[Verdict, bool]:
        grading, repair = prompts[judge_lang(row, lang)]
        messages = grading.messages(query=row["q"], ideal=ideal, candidate=row["answer"])
        label = _label(row, model, repeat)
        again = {"fresh": True} if fresh else {}  # a plain call stays plain (the sweep's counting client)
        first = client.chat(client.request(messages, grading.id, model, json_reply=True, repeat=repeat,
                                           max_tokens=JUDGE_MAX_TOKENS), label, **again)
        grade = parse_grade(first.text)
        if grade is not None:
            return Verdict(grade, [first.text]), first.cached
        follow_up = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
        second = client.chat(client.request(follow_up, f"{grading.id}+{repair.id}", model, json_reply=True,
                                            repeat=repeat, max_tokens=JUDGE_MAX_TOKENS), label, **again)
        return Verdict(parse_grade(second.text), [first.text, second.text]), first.cached and second.cached

    return _asking_again(ask, retry_unparsed, asked_again)


def make_logprob_judge(client: ChatClient, top_logprobs: int, retry_unparsed: bool = False,
                       retried: list[str] | None = None) -> Judge:
    """``judge((row, ideal, model, repeat)) -> Verdict``: one one-token call; grade = E[digit] (G-Eval).

    ``retry_unparsed`` and ``retried`` as in :func:`make_judge`: a cached reply that yields no grade (no
    digit among its top tokens, or a logprob that is not one) is asked again, bypassing the cache."""
    prompt = load_prompt("grading-logprobs")
    asked_again: list[str] = retried if retried is not None else []

    def ask(row: Row, ideal: str, model: str, repeat: int, fresh: bool) -> tuple[Verdict, bool]:
        messages = prompt.messages(query=row["q"], ideal=ideal, candidate=row["answer"])
        again = {"fresh": True} if fresh else {}
        reply = client.chat(client.request(messages, prompt.id, model, repeat=repeat, top_logprobs=top_logprobs),
                            _label(row, model, repeat), **again)
        probs = digit_probabilities(unpack_reply(reply.text))
        return Verdict(None if probs is None else expected_grade(probs), [reply.text], probs), reply.cached

    return _asking_again(ask, retry_unparsed, asked_again)


def grading_prompts(grade_mode: str) -> Mapping[str, str]:
    """Prompt name → version id used by a grade mode (for the run record and ``meta``)."""
    names = ("grading-logprobs",) if grade_mode == "logprobs" else ("grading", "grading-repair")
    return {name: load_prompt(name).id for name in names}


@dataclass(frozen=True)
class GradingOptions:
    """How answers are gated and graded (issue 20): grade mode, top logprobs, gate patterns and ratio."""

    grade_mode: str = "digit"
    top_logprobs: int = 10
    degenerate_patterns: Path | None = None
    long_answer_ratio: float = 5.0
    keep_degenerate: bool = False

    def gate(self) -> ReferenceGate:
        return make_gate(self.degenerate_patterns, self.long_answer_ratio)

    def judge(self, client: ChatClient, lang: str = "en", retry_unparsed: bool = False) -> Judge:
        """The judge function of this grade mode (see :func:`make_judge`, in ``lang``; :func:`make_logprob_judge`);
        ``retry_unparsed`` as there."""
        if self.grade_mode == "logprobs":
            return make_logprob_judge(client, self.top_logprobs, retry_unparsed)
        return make_judge(client, retry_unparsed, lang=lang)


@dataclass
class Judged:
    """Graded records in row order, unparsed replies, failed calls and the grade array."""

    graded: list[Row]
    unparsed: list[Row]
    failures: list[Row]
    grades: np.ndarray  # (judges, repeats, rows), NaN where no grade
    seconds: float
    retried_unparsed: int = 0


def _record(row: Row, ideal: str | None, grade: float | None, lang: str | None = None) -> Row:
    values = {**row, "answer_ideal": ideal, "answer_topK": row.get("answer"), "grade": grade}
    record = {k: values.get(k) for k in GRADED_KEYS}
    if lang is not None:
        record["lang"] = lang
    if row.get("cut"):
        record["cut"] = row["cut"]
    return record


def _mean_probs(verdicts: list[Verdict | None]) -> list[float] | None:
    probs = [v.probs for v in verdicts if v is not None and v.probs is not None]
    return [float(x) for x in np.mean(probs, axis=0)] if probs else None


def grade_rows(rows: list[Row], ideal: dict[str, str | None], client: LLMClient, judges: list[str],
               repeats: int, progress: bool = True, judge: Judge | None = None, skip: Mapping[str, str] | None = None,
               retry_unparsed: bool = False, lang: str = "en", top_logprobs: int | None = None) -> Judged:
    """Judge every answered row ``repeats`` times per judge; rows without answers get grade null + error;
    rows whose id is in ``skip`` (id → degenerate kind of its ideal answer) are not judged.
    ``judge``: the judge function (default :func:`make_judge` in ``lang``); ``retry_unparsed``: see
    :func:`make_judge` (only for the default judge, in the ``rw`` cache mode: ``replay`` cannot send,
    ``refresh`` and ``off`` ask everything anyway); ``top_logprobs``: without ``judge``, the default judge
    is :func:`make_logprob_judge` (``--grade-mode logprobs``). Each graded record carries the grading
    language as ``lang`` (and the answer's ``cut``, if any)."""
    skip = skip or {}
    items = [(row, ideal[row["id"]], model, repeat) for row in rows
             if row.get("answer") is not None and ideal.get(row["id"]) is not None and row["id"] not in skip
             for model in judges for repeat in range(repeats)]
    labels = [_label(row, model, repeat) for row, _, model, repeat in items]
    retried: list[str] = []
    retry = retry_unparsed and client.config.cache == "rw"
    if judge is None and top_logprobs is not None:
        judge = make_logprob_judge(client, top_logprobs, retry, retried)
    judge = judge or make_judge(client, retry, retried, lang)
    outcome = run_items(client, judge, items, labels, "grading", progress)
    verdicts = {(id(it[0]), it[2], it[3]): (res, err) for it, res, err in zip(items, outcome.results, outcome.errors)}
    grades = np.full((len(judges), repeats, len(rows)), np.nan)
    graded, unparsed = [], []
    for index, row in enumerate(rows):
        if row["id"] in skip and row.get("answer") is not None:
            graded.append({**_record(row, ideal.get(row["id"]), None, judge_lang(row, lang)), "grades": [], "ideal_degenerate": skip[row["id"]],
                           "skipped": f"degenerate ideal answer ({skip[row['id']]}): not sent to the judge"})
            continue
        if (id(row), judges[0], 0) not in verdicts:
            reason = "no ideal answer" if ideal.get(row["id"]) is None else "no top-K answer"
            missing = {**_record(row, ideal.get(row["id"]), None, judge_lang(row, lang)), "grades": [], "error": reason}
            if row.get("error"):
                missing["answer_error"] = row["error"]  # why generate has no answer (e.g. context length exceeded)
            graded.append(missing)
            continue
        per_judge: dict[str, list[float | None]] = {}
        replies, call_errors, first_verdicts = [], [], []
        for j, model in enumerate(judges):
            per_judge[model] = []
            for repeat in range(repeats):
                verdict, error = verdicts[(id(row), model, repeat)]
                if j == 0:
                    first_verdicts.append(verdict)
                grade = verdict.grade if verdict is not None else None
                per_judge[model].append(grade)
                if grade is not None:
                    grades[j, repeat, index] = grade
                elif verdict is not None:
                    replies.append({"model": model, "repeat": repeat, "replies": verdict.replies})
                else:
                    call_errors.append({"model": model, "repeat": repeat, "error": error})
        parsed = [g for g in per_judge[judges[0]] if g is not None]
        record = {**_record(row, ideal[row["id"]], float(np.mean(parsed)) if parsed else None, judge_lang(row, lang)),
                  "grades": per_judge[judges[0]]}
        if repeats > 1:
            record["grade_sd"] = float(np.std(parsed, ddof=1)) if len(parsed) > 1 else None
        if any(v is not None and v.probs is not None for v in first_verdicts):
            record["grade_probs"] = _mean_probs(first_verdicts)
            if repeats > 1:
                record["grade_probs_repeats"] = [None if v is None else v.probs for v in first_verdicts]
        if len(judges) > 1:
            record["judges"] = per_judge
        if replies:
            record["judge_reply"] = replies
            unparsed.append({"item": _label(row, judges[0], 0).rsplit(" judge=", 1)[0], "judge_reply": replies})
        if call_errors:
            record["judge_error"] = call_errors
        graded.append(record)
    return Judged(graded, unparsed, outcome.failures, grades, outcome.seconds, len(retried))


def judge_models(config: ClientConfig, second_judge: str | None = None) -> list[str]:
    """The judges: the configured model, then a second judge model if given (not an empty name)."""
    if second_judge is not None and not second_judge.strip():
        raise RagdiagError("--second-judge must name a chat model, got an empty name")
    return [config.model] + ([second_judge] if second_judge else [])


def language_prompts(langs: list[str]) -> list[str]:
    """Prompt ids for these languages, grading then repair per language (English first)."""
    return [load_prompt_lang(name, code).id for code in LANGS if code in langs for name in ("grading", "grading-repair")]


def gate_answers(gate: ReferenceGate, ideal: dict[str, str | None], rows: list[Row]
                 ) -> tuple[dict[str, str], list[str | None]]:
    """Degenerate kinds: ideal answer per id (only the degenerate ones), and each top-K row's answer."""
    question = {row["id"]: row["q"] for row in rows}
    ids = list(ideal)
    ideal_kinds = gate.classify([ideal[i] for i in ids], [question.get(i) for i in ids])
    topk_kinds = gate.classify([row.get("answer") for row in rows], [row["q"] for row in rows])
    return {i: k for i, k in zip(ids, ideal_kinds) if k is not None}, topk_kinds


def gate_summary(gate: ReferenceGate, ideal: dict[str, str | None], ideal_kinds: dict[str, str],
                 topk: list[Row], topk_kinds: list[str | None], skipped_rows: int,
                 keep_degenerate: bool) -> GateCounts:
    """Counts per kind for ideal and top-K answers (answers present only), with the gate's settings."""
    ideal_counts = count_kinds(ideal_kinds.get(i) for i, text in ideal.items() if text is not None)
    topk_counts = count_kinds(k for row, k in zip(topk, topk_kinds) if row.get("answer") is not None)
    return GateCounts(**gate_settings(gate), ideal=ideal_counts, topK=topk_counts, skipped_rows=skipped_rows,
                      keep_degenerate=keep_degenerate)
