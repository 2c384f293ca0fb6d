"""``ragdiag grade``: an LLM judge scores each top-K answer against the ideal answer (1–5).

Paper 003 appendix A.3 / METHODS.md §9. Each answer is judged ``repeats`` times by each judge model
(the repeat index is in the cache key, so repeats are distinct calls). A reply without a grade
gets one repair request; if that holds no grade either, the grade is missing (null) and the reply
is kept — never a default. ``grade`` is the mean of the first judge's parsed grades.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.data.loaders import file_sha256, read_jsonl_lines
from ragdiag.data.schema import check_graded_record, graded_key
from ragdiag.errors import DataError, RagdiagError
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.language import LANG_CHOICES, LANGS, choose_lang
from ragdiag.llm.prompts import load_prompt_lang
from ragdiag.metrics.coverage import topk_coverage
from ragdiag.llm.runner import run_items
from ragdiag.pipeline.agreement import agreement_summary
from ragdiag.pipeline.grade_parse import parse_grade
from ragdiag.io.writer import write_json
from ragdiag.pipeline.run_meta import guard_run_outputs, open_record, run_details, run_meta, summary, write_manifest

GRADED_KEYS = ("id", "E", "Nc", "Np", "K", "rank", "inK", "answer_ideal", "answer_topK", "grade", "P", "R")


@dataclass(frozen=True)
class Verdict:
    """One judge call (plus its repair, if needed): the parsed grade or None, and the replies."""

    grade: int | None
    replies: list[str] = field(default_factory=list)


@dataclass
class GradeResult:
    graded: list[dict[str, Any]]
    meta: dict[str, Any]
    summary: dict[str, Any]
    failures: list[dict[str, Any]]
    unparsed: list[dict[str, Any]]
    manifest: Path


def _line_error(path: Path, line: int, field: str | None, problem: str) -> DataError:
    return DataError.at(f"{path}: line {line}", None, field, problem)


def _check_answer_row(row: dict[str, Any], path: Path, line: int) -> None:
    """A row of ``ragdiag generate``'s answers file, checked before any call is spent on it."""
    if not isinstance(row.get("id"), str) or not row["id"]:
        raise _line_error(path, line, "id", "missing or not a non-empty string")
    if not isinstance(row.get("q"), str):
        raise _line_error(path, line, "q", f"the question must be a string, got {type(row.get('q')).__name__}")
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise _line_error(path, line, "answer", f"must be a string or null, got {type(answer).__name__}")
    if row["kind"] == "ideal":
        return
    check_graded_record({**row, "grade": None}, f"{path}: line {line}", None)  # id, E, Nc, Np, K, inK
    rank = row.get("rank")
    if not isinstance(rank, list) or len(rank) != row["K"]:
        raise _line_error(path, line, "rank", f"must list the top K = {row['K']} candidate indices")
    if any(type(i) is not int or not 0 <= i < row["Nc"] for i in rank) or len(set(rank)) != len(rank):
        raise _line_error(path, line, "rank", f"items must be distinct candidate indices 0..{row['Nc'] - 1}")
    if row["inK"] != [1 if i < row["Np"] else 0 for i in rank]:
        raise _line_error(path, line, "inK", "does not match rank (1 exactly where the index is below Np)")
    for name in ("P", "R"):
        value = row.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _line_error(path, line, name, f"expected a finite number, got {value!r}")


def read_answers(path: Path) -> tuple[dict[str, Any], dict[str, str | None], list[dict[str, Any]]]:
    """The answers file of ``ragdiag generate``: its meta, ideal answers by id, and top-K rows.

    The whole file is validated first (line numbers 1-based): kinds, types, top-K invariants,
    duplicated ideal or top-K rows (both lines named).
    """
    meta: dict[str, Any] = {}
    ideal: dict[str, str | None] = {}
    ideal_line: dict[str, int] = {}
    topk_line: dict[tuple, int] = {}
    rows = []
    for line, row in read_jsonl_lines(path):
        kind = row.get("kind") if isinstance(row, dict) else None
        if kind == "meta":
            meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
            continue
        if kind not in ("ideal", "topK"):
            raise _line_error(path, line, "kind", f"expected meta, ideal or topK, got {kind!r}")
        _check_answer_row(row, path, line)
        if kind == "ideal":
            if row["id"] in ideal_line:
                raise _line_error(path, line, "id", f"a second ideal row for '{row['id']}' (first on line "
                                  f"{ideal_line[row['id']]})")
            ideal_line[row["id"]] = line
            ideal[row["id"]] = row.get("answer")
        else:
            key = graded_key(row)
            if key in topk_line:
                raise _line_error(path, line, None, f"the same top-K row as line {topk_line[key]} (id '{key[0]}', "
                                  f"E '{key[1]}', Nc {key[2]}, Np {key[3]}, K {key[4]})")
            topk_line[key] = line
            rows.append(row)
    if not rows:
        raise DataError(f"{path}: no topK rows to grade")
    return meta, ideal, rows


def _label(row: dict[str, Any], model: str, repeat: int) -> str:
    return f"topK {row['id']} E={row['E']} Nc={row['Nc']} Np={row['Np']} K={row['K']} judge={model} repeat={repeat}"


def judge_lang(row: dict[str, Any], lang: str) -> str:
    """The grading language of a row: ``lang`` when en or fr; with auto, the row's ``lang`` (written by
    generate), else the question's detected language."""
    if lang != "auto":
        return lang
    return row["lang"] if row.get("lang") in LANGS else choose_lang("auto", row["q"])


def make_judge(client: LLMClient, lang: str = "en"):
    """``judge((row, ideal, model, repeat)) -> Verdict``: grading prompt in the row's language
    (:func:`judge_lang`), then one repair if needed."""
    prompts = {code: (load_prompt_lang("grading", code), load_prompt_lang("grading-repair", code)) for code in LANGS}

    def judge(item: tuple[dict[str, Any], str, str, int]) -> Verdict:
        row, ideal, model, repeat = item
        grading, repair = prompts[judge_lang(row, lang)]
        messages = grading.messages(query=row["q"], ideal=ideal, candidate=row["answer"])
        label = _label(row, model, repeat)
        first = client.chat(client.request(messages, grading.id, model, json_reply=True, repeat=repeat), label)
        grade = parse_grade(first.text)
        if grade is not None:
            return Verdict(grade, [first.text])
        follow_up = [*messages, {"role": "assistant", "content": first.text}, *repair.messages()]
        second = client.chat(client.request(follow_up, f"{grading.id}+{repair.id}", model, json_reply=True,
                                            repeat=repeat), label)
        return Verdict(parse_grade(second.text), [first.text, second.text])

    return judge


@dataclass
class Judged:
    """Graded records in row order, unparsed replies, failed calls and the grade array."""

    graded: list[dict[str, Any]]
    unparsed: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    grades: np.ndarray  # (judges, repeats, rows), NaN where no grade
    seconds: float


def _record(row: dict[str, Any], ideal: str | None, grade: float | None, lang: str | None = None) -> dict[str, Any]:
    values = {**row, "answer_ideal": ideal, "answer_topK": row.get("answer"), "grade": grade}
    record = {k: values.get(k) for k in GRADED_KEYS}
    if lang is not None:
        record["lang"] = lang
    if row.get("cut"):
        record["cut"] = row["cut"]
    return record


def grade_rows(rows: list[dict[str, Any]], ideal: dict[str, str | None], client: LLMClient, judges: list[str],
               repeats: int, progress: bool = True, lang: str = "en") -> Judged:
    """Judge every answered row ``repeats`` times per judge; rows without answers get grade null + error.
    Each graded record carries the grading language as ``lang`` (and the answer's ``cut``, if any)."""
    items = [(row, ideal[row["id"]], model, repeat) for row in rows
             if row.get("answer") is not None and ideal.get(row["id"]) is not None
             for model in judges for repeat in range(repeats)]
    labels = [_label(row, model, repeat) for row, _, model, repeat in items]
    outcome = run_items(client, make_judge(client, lang), items, labels, "grading", progress)
    verdicts = {(id(it[0]), it[2], it[3]): (res, err) for it, res, err in zip(items, outcome.results, outcome.errors)}
    grades = np.full((len(judges), repeats, len(rows)), np.nan)
    graded, unparsed = [], []
    for index, row in enumerate(rows):
        if (id(row), judges[0], 0) not in verdicts:
            reason = "no ideal answer" if ideal.get(row["id"]) is None else "no top-K answer"
            missing = {**_record(row, ideal.get(row["id"]), None, judge_lang(row, lang)), "grades": [], "error": reason}
            if row.get("error"):
                missing["answer_error"] = row["error"]  # why generate has no answer (e.g. context length exceeded)
            graded.append(missing)
            continue
        per_judge: dict[str, list[int | None]] = {}
        replies, call_errors = [], []
        for j, model in enumerate(judges):
            per_judge[model] = []
            for repeat in range(repeats):
                verdict, error = verdicts[(id(row), model, repeat)]
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
        if len(judges) > 1:
            record["judges"] = per_judge
        if replies:
            record["judge_reply"] = replies
            unparsed.append({"item": _label(row, judges[0], 0).rsplit(" judge=", 1)[0], "judge_reply": replies})
        if call_errors:
            record["judge_error"] = call_errors
        graded.append(record)
    return Judged(graded, unparsed, outcome.failures, grades, outcome.seconds)


def judge_models(config: ClientConfig, second_judge: str | None = None) -> list[str]:
    """The judges: the configured model, then a second judge model if given."""
    return [config.model] + ([second_judge] if second_judge else [])


def _grading_prompts(langs: list[str]) -> list[str]:
    """Prompt ids for these languages, grading then repair per language (English first)."""
    return [load_prompt_lang(name, code).id for code in LANGS if code in langs for name in ("grading", "grading-repair")]


def run_grade(answers: Path, out: Path, config: ClientConfig, repeats: int = 1, judges: list[str] | None = None,
              progress: bool = True, lang: str = "auto") -> GradeResult:
    """Check outputs against inputs, validate the whole answers file, judge, write ``out`` (a JSON
    list) and its manifest (meta, run, summary, failures, unparsed, run record). ``lang``: en, fr or
    auto (each row's ``lang``, else the question's detected language)."""
    if repeats < 1:
        raise RagdiagError(f"--repeats must be at least 1, got {repeats}")
    if lang not in LANG_CHOICES:
        raise RagdiagError(f"--lang must be one of {', '.join(LANG_CHOICES)}, got '{lang}'")
    manifest = guard_run_outputs([out], [answers])
    answers_meta, ideal, rows = read_answers(answers)
    judges = judges or [config.model]
    langs = sorted({judge_lang(r, lang) for r in rows}, key=LANGS.index) or ["en"]
    prompt_ids = _grading_prompts(langs)
    record = open_record("grade", config, [answers], {p.split("@")[0]: p for p in prompt_ids}, judges)
    client = LLMClient(config)
    try:
        judged = grade_rows(rows, ideal, client, judges, repeats, progress, lang)
        covered = sum(1 for r in judged.graded if r["grade"] is not None)
        graded_cover = topk_coverage(judged.graded, lambda r: r["grade"] is not None)
        result_summary = summary(client, len(judged.graded), covered, judged.seconds,
                                 missing_grades=sum(1 for r in judged.graded if r["grade"] is None and "error" not in r),
                                 no_answer=sum(1 for r in judged.graded if "error" in r),
                                 agreement=agreement_summary(judged.grades, judges), coverage_by_K=graded_cover,
                                 lang={"setting": lang, **{c: sum(1 for r in judged.graded if r.get("lang") == c)
                                                           for c in LANGS}})
        meta = run_meta("grade", client, prompts=prompt_ids, judges=judges, repeats=repeats,
                        answers={"source": str(answers), "sha256": file_sha256(answers)}, answers_meta=answers_meta,
                        lang=lang)
        details = run_details(client)
    finally:
        client.close()
    write_json(out, judged.graded, inputs=[answers])
    write_manifest(manifest, record, [answers], meta=meta, run=details, summary=result_summary,
                   failures=judged.failures, unparsed=judged.unparsed)
    return GradeResult(judged.graded, meta, result_summary, judged.failures, judged.unparsed, manifest)
