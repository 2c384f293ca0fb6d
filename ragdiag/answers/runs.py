"""One generate run and one grade run as computations: samples or answers in, typed outcomes out.

:func:`generate` answers the ideal and top-K rows of ranked samples; :func:`grade` judges the top-K
answers of an :class:`~ragdiag.answers.answers_file.AnswersFile`. Each returns the rows, the ``meta``
block, the server details, the summary and the failures; ``commands/`` writes them and stamps the run
record. Notices (skipped items, language, budget, gate) go to ``notice`` as they are known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.agreement import agreement_summary
from ragdiag.answers.answers_file import AnswersFile
from ragdiag.answers.generation import (
    Row,
    Skipped,
    SkippedBlock,
    answer_rows,
    gate_counts_of,
    gate_notice,
    generate_answers,
    plan_lines,
    plan_summary,
    used_prompts,
)
from ragdiag.answers.judging import (
    gate_answers,
    gate_summary,
    grade_rows,
    grading_prompts,
    judge_lang,
    language_prompts,
)
from ragdiag.answers.plan import AnswerPlan, AnswerSettings
from ragdiag.answers.run_stats import ServerDetails, run_details, run_meta, run_summary
from ragdiag.data.reference_gate import ReferenceGate
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.language import LANGS
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
from ragdiag.metrics.coverage import coverage_line, topk_coverage
from ragdiag.results.llm_run import RunMeta, RunSummary

Notice = Callable[[str], None]


@dataclass
class Samples:
    """Texts samples by id and the ranked samples to answer, with the ``inputs`` block of the answers meta."""

    texts: dict[str, TextsSample]
    ranked: list[RankedSample]
    ranked_source: str
    texts_source: str
    inputs: dict[str, Any]
    skipped: Skipped = field(default_factory=Skipped)


@dataclass
class Answered:
    """A generate run: the rows (meta line aside), meta, server details, summary, failures, skipped items and
    the prompt versions the rows were asked with (for the run record)."""

    rows: list[Row]
    meta: RunMeta
    details: ServerDetails
    summary: RunSummary
    failures: list[Row]
    skipped: SkippedBlock
    prompts: dict[str, str]


@dataclass
class Graded:
    """A grade run: graded records, meta, server details, summary, failures and unparsed replies."""

    graded: list[Row]
    meta: RunMeta
    details: ServerDetails
    summary: RunSummary
    failures: list[Row]
    unparsed: list[Row]


def generate(samples: Samples, ks: list[int], dataset: str, config: ClientConfig, gate: ReferenceGate,
             settings: AnswerSettings, progress: bool, notice: Notice) -> Answered:
    """Answer one ideal row per query and one top-K row per (ranked sample, K ≤ Nc); count degenerate answers."""
    rows = answer_rows(samples.texts, samples.ranked, ks, samples.ranked_source, samples.skipped)
    if not any(r["kind"] == "topK" for r in rows):
        raise RagdiagError(f"no ranked sample has Nc ≥ any of the cut-offs K = {ks}: nothing to answer")
    for line in samples.skipped.notices(samples.texts_source):
        notice(line)
    skipped = samples.skipped.block()
    client = LLMClient(config)
    try:
        plan = AnswerPlan.resolve(settings, client)
        for line in plan.notices:
            notice(line)
        shown = len(plan.notices)
        rows, failures, seconds = generate_answers(samples.texts, rows, client, progress, plan)
        done = sum(1 for r in rows if r["answer"] is not None)
        answered = topk_coverage(rows, lambda r: r["answer"] is not None)
        gate_counts = gate_counts_of(gate, rows)
        summary = run_summary(client, len(rows), done, seconds, skipped=skipped, coverage_by_K=answered,
                              reference_gate=gate_counts, **plan_summary(plan, rows))
        used = used_prompts(plan, rows)
        prompts = {prompt.split("@")[0]: prompt for prompt in used}  # the versions the rows were asked with
        prompts[gate.patterns.source.split("@")[0]] = gate.patterns.source
        meta = run_meta("generate", client, prompts=used, k=ks, dataset=dataset, **samples.inputs, **plan.as_meta())
        details = run_details(client)
    finally:
        client.close()
    gate_line = gate_notice(gate_counts)
    for line in ([*plan.notices[shown:], *plan_lines(plan, rows, settings)]
                 + ([coverage_line(answered)] if answered["uneven"] else []) + ([gate_line] if gate_line else [])):
        notice(line)
    return Answered(rows, meta, details, summary, failures, skipped, prompts)


def grade_prompt_versions(answers: AnswersFile, grade_mode: str, lang: str) -> Mapping[str, str]:
    """Prompt name → version of a grade run: the logprobs prompt, or grading and repair per language used."""
    if grade_mode == "logprobs":
        return grading_prompts(grade_mode)
    langs = sorted({judge_lang(r, lang) for r in answers.rows}, key=LANGS.index) or ["en"]
    return {p.split("@")[0]: p for p in language_prompts(langs)}


def grade(answers: AnswersFile, source: Path, sha256: str, config: ClientConfig, judges: list[str], repeats: int,
          gate: ReferenceGate, grade_mode: str, top_logprobs: int, keep_degenerate: bool, retry_unparsed: bool,
          lang: str, progress: bool) -> Graded:
    """Gate the ideal answers, judge every answered top-K row, count; ``source`` and ``sha256`` name the
    answers file in the meta."""
    prompts = grade_prompt_versions(answers, grade_mode, lang)
    ideal, rows = answers.ideal, answers.rows
    ideal_kinds, topk_kinds = gate_answers(gate, ideal, rows)
    skip = {} if keep_degenerate else ideal_kinds
    client = LLMClient(config)
    try:
        logprobs = top_logprobs if grade_mode == "logprobs" else None
        judged = grade_rows(rows, ideal, client, judges, repeats, progress, None, skip, retry_unparsed, lang, logprobs)
        for graded_row, kind in zip(judged.graded, topk_kinds):
            if kind is not None:
                graded_row["topK_degenerate"] = kind
            if keep_degenerate and graded_row["id"] in ideal_kinds:
                graded_row["ideal_degenerate"] = ideal_kinds[graded_row["id"]]
        skipped = sum(1 for r in judged.graded if "skipped" in r)
        covered = sum(1 for r in judged.graded if r["grade"] is not None)
        graded_cover = topk_coverage(judged.graded, lambda r: r["grade"] is not None)
        gate_counts = gate_summary(gate, ideal, ideal_kinds, rows, topk_kinds, skipped, keep_degenerate)
        summary = run_summary(client, len(judged.graded) - skipped, covered, judged.seconds,
                              missing_grades=sum(1 for r in judged.graded if r["grade"] is None
                                                 and "error" not in r and "skipped" not in r),
                              no_answer=sum(1 for r in judged.graded if "error" in r),
                              retried_unparsed=judged.retried_unparsed,
                              agreement=agreement_summary(judged.grades, judges), reference_gate=gate_counts,
                              coverage_by_K=graded_cover,
                              lang={"setting": lang, **{c: sum(1 for r in judged.graded if r.get("lang") == c)
                                                        for c in LANGS}})
        mode = {"grade_mode": grade_mode, **({"top_logprobs": top_logprobs} if grade_mode == "logprobs" else {})}
        meta = run_meta("grade", client, prompts=list(prompts.values()), judges=judges, repeats=repeats, **mode,
                        judge_max_tokens=JUDGE_MAX_TOKENS, reference_gate=gate.describe(),
                        answers={"source": str(source), "sha256": sha256}, answers_meta=answers.meta, lang=lang)
        details = run_details(client)
    finally:
        client.close()
    return Graded(judged.graded, meta, details, summary, judged.failures, judged.unparsed)
