"""Ideal answers (all positives) and top-K answers (first K ranked candidates) of ranked samples.

Paper 003 appendix A.2 / docs/methods.md#9-generation-and-grading: the model answers only from the numbered
references, given in ranked order, each fenced as data (:func:`ragdiag.llm.prompts.fence_passages`). Rows:
one ``ideal`` row per query, one ``topK`` row per (ranked sample, K) with ``rank`` (first K), ``inK``,
``P`` = n/K and ``R`` = n/Np. Ranked samples without texts and K > Nc pairs are reported (count and first
ids, :class:`Skipped`), never dropped silently. ``ragdiag generate`` (:mod:`ragdiag.commands.generate`)
writes the rows; this module writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from ragdiag.answers.plan import AnswerPlan, AnswerSettings, PlannedAnswer, answer_in_plan
from ragdiag.data.reference_gate import KINDS, ReferenceGate, count_kinds
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.errors import DataError
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.client import ChatResult, LLMClient
from ragdiag.llm.language import LANGS
from ragdiag.llm.output_limit import DEFAULT_ANSWER_TOKENS
from ragdiag.llm.prompts import Prompt
from ragdiag.llm.runner import run_items

Row = dict[str, Any]  # one answers-file row (kind ideal or topK), as written


class SkippedCount(TypedDict):
    count: int
    first: list[str]


class SkippedBlock(TypedDict):
    """The ``skipped`` block of a generate manifest and summary."""

    ranked_without_texts: SkippedCount
    k_above_nc: SkippedCount


class GateCounts(TypedDict, total=False):
    """The ``reference_gate`` block: the gate's settings, then degenerate answers per kind (ideal, top-K)."""

    patterns: object
    long_answer_ratio: object
    kinds: object
    ideal: dict[str, int]
    topK: dict[str, int]
    checked: str
    keep_degenerate: bool
    skipped_rows: int
    skipped_contexts: int


class LangCounts(TypedDict):
    setting: str
    en: int
    fr: int


class PlanSummary(TypedDict, total=False):
    """What the answer plan adds to a generate summary: languages, references cut, context errors."""

    lang: LangCounts
    references_cut: int
    context_exceeded: int
    context_refits: int


def _candidate(sample: TextsSample, np_: int, index: int) -> str:
    """Candidate ``index`` of a ranked sample with ``np_`` positives: p[index] if index < Np, else n[index − Np]."""
    return sample.p[index] if index < np_ else sample.n[index - np_]


@dataclass
class Skipped:
    """Items left out of a run, reported (count and first ids) instead of dropped silently."""

    ranked_without_texts: list[str] = field(default_factory=list)
    k_above_nc: list[str] = field(default_factory=list)

    def block(self, first: int = 5) -> SkippedBlock:
        """Count and first ids of each kind of skipped item."""
        return SkippedBlock(ranked_without_texts=SkippedCount(count=len(self.ranked_without_texts),
                                                              first=self.ranked_without_texts[:first]),
                            k_above_nc=SkippedCount(count=len(self.k_above_nc), first=self.k_above_nc[:first]))

    def notices(self, texts_source: str, first: int = 5) -> list[str]:
        """One line per kind of skipped item, naming the first ids."""
        lines = []
        if self.ranked_without_texts:
            ids = self.ranked_without_texts
            lines.append(f"skipped {len(ids)} ranked sample(s) with no texts sample in {texts_source}: "
                         f"{', '.join(ids[:first])}{' …' if len(ids) > first else ''}")
        if self.k_above_nc:
            ids = self.k_above_nc
            lines.append(f"skipped {len(ids)} (ranked sample, K) pair(s) whose K exceeds the sample's Nc: "
                         f"{', '.join(ids[:first])}{' …' if len(ids) > first else ''}")
        return lines


def topk_rows(texts: dict[str, TextsSample], ranked: list[RankedSample], ks: list[int], source: str,
              skipped: Skipped | None = None) -> list[Row]:
    """One row per (ranked sample, K ≤ Nc), checked against its texts sample; pairs with K > Nc are
    recorded in ``skipped``.

    A ranked sample uses the first Np positives and the first Nc − Np negatives of its texts sample
    (paper 003 appendix A.1: several (Nc, Np) variants share one query).
    """
    rows = []
    for number, r in enumerate(ranked, start=1):
        sample = texts.get(r.id)
        if sample is None:
            raise DataError.at(source, number, "id", f"'{r.id}' has no texts sample")
        if r.Np > len(sample.p) or r.Nc - r.Np > len(sample.n):
            raise DataError.at(source, number, "Nc", f"Np={r.Np}, Nc={r.Nc} need more candidates than texts sample "
                               f"'{r.id}' has ({len(sample.p)} positives, {len(sample.n)} negatives)")
        for k in ks:
            if k > r.Nc:
                if skipped is not None:
                    skipped.k_above_nc.append(f"{r.id} (E={r.E}, Nc={r.Nc}, Np={r.Np}, K={k})")
                continue
            top = r.rank[:k]
            in_k = [1 if i < r.Np else 0 for i in top]
            rows.append({"kind": "topK", "id": r.id, "E": r.E, "Nc": r.Nc, "Np": r.Np, "K": k, "rank": top,
                         "inK": in_k, "P": sum(in_k) / k, "R": sum(in_k) / r.Np, "q": sample.q})
    return rows


def answer_rows(texts: dict[str, TextsSample], ranked: list[RankedSample], ks: list[int],
                ranked_source: str = "<ranked>", skipped: Skipped | None = None) -> list[Row]:
    """The rows to answer: one ideal row per query, then one top-K row per (ranked sample, K ≤ Nc)."""
    ideal = [{"kind": "ideal", "id": qid, "q": texts[qid].q} for qid in dict.fromkeys(r.id for r in ranked)
             if qid in texts]
    return ideal + topk_rows(texts, ranked, ks, ranked_source, skipped)


def generate_answers(texts: dict[str, TextsSample], rows: list[Row], client: LLMClient,
                     progress: bool = True, plan: AnswerPlan | None = None
                     ) -> tuple[list[Row], list[Row], float]:
    """Answer ``rows`` (from :func:`answer_rows`) in place with ``answer`` or ``error``, ``lang`` (the
    question's language) and ``cut`` (what the prompt budget cut, when it cut something); the
    failures; seconds."""
    plan = plan or AnswerPlan.resolve(AnswerSettings(lang="en"), client)

    def passages(row: Row) -> list[str]:
        sample = texts[row["id"]]
        return sample.p if row["kind"] == "ideal" else [_candidate(sample, row["Np"], i) for i in row["rank"]]

    for row in rows:
        row["lang"] = plan.lang_of(row["q"])

    def answer(row: Row) -> PlannedAnswer:
        return answer_in_plan(client, plan, row["q"], passages(row), _label(row), row["lang"])

    outcome = run_items(client, answer, rows, [_label(r) for r in rows], "generating", progress)
    for row, done, error in zip(rows, outcome.results, outcome.errors):
        if error is None:
            row.update({"answer": done.result.text, **({"cut": done.cut} if done.cut is not None else {})})
        else:
            row.update({"answer": None, "error": error})
    return rows, outcome.failures, outcome.seconds


def answer_from_references(client: ChatClient, prompt: Prompt, query: str, passages: list[str], label: str,
                           max_tokens: int = DEFAULT_ANSWER_TOKENS) -> ChatResult:
    """One generation call: the query and its references, in ranked order, through the cached client
    (identical prompts are one cache entry, which is how ``sweep`` reuses answers across points);
    ``max_tokens``: the output limit (``--max-answer-tokens``)."""
    messages = prompt.messages(query=query, references=passages)
    return client.chat(client.request(messages, prompt.id, max_tokens=max_tokens), label)


def _label(row: Row) -> str:
    if row["kind"] == "ideal":
        return f"ideal {row['id']}"
    return f"topK {row['id']} E={row['E']} Nc={row['Nc']} Np={row['Np']} K={row['K']}"


def used_prompts(plan: AnswerPlan, rows: list[Row]) -> list[str]:
    """The prompt versions the rows were asked with (English first)."""
    return [plan.prompt(lang).id for lang in LANGS if any(r.get("lang") == lang for r in rows)] or \
        [plan.prompt("en").id]


def plan_summary(plan: AnswerPlan, rows: list[Row]) -> PlanSummary:
    """Languages chosen, items whose references were cut, calls that exceeded the model's context."""
    extra = PlanSummary(lang=LangCounts(setting=plan.settings.lang, en=sum(1 for r in rows if r.get("lang") == "en"),
                                        fr=sum(1 for r in rows if r.get("lang") == "fr")))
    if plan.settings.max_prompt_tokens is not None:
        extra["references_cut"] = sum(1 for r in rows if r.get("cut"))
    extra["context_exceeded"] = len(plan.context_errors)
    if plan.refits:
        extra["context_refits"] = plan.refits
    return extra


def plan_lines(plan: AnswerPlan, rows: list[Row], settings: AnswerSettings) -> list[str]:
    """Notices: which language was chosen (auto), what the budget cut, and the option to use after context errors."""
    lines = []
    questions = {r["q"]: r.get("lang") for r in rows}
    if settings.lang == "auto" and any(v == "fr" for v in questions.values()):  # all English: the summary says so
        counts = {lang: sum(1 for v in questions.values() if v == lang) for lang in LANGS}
        lines.append(f"--lang auto: {counts['fr']} question(s) detected as French (prompt {plan.prompt('fr').id}), "
                     f"{counts['en']} as English (prompt {plan.prompt('en').id}); each row records its lang")
    if plan.budget_source is not None:
        cut = [r for r in rows if r.get("cut")]
        size = f"{plan.budget_tokens} tokens" if plan.budget_tokens is not None else "per refused item"
        lines.append(f"prompt budget {size} ({plan.budget_source}; counted with "
                     f"{plan.counter.name if plan.counter else '?'}, --fit {settings.fit}): references cut in "
                     f"{len(cut)} of {len(rows)} items (each row's 'cut' says what)")
    suggestion = plan.suggestion()
    if suggestion:
        lines.append(suggestion)
    return lines


def gate_counts_of(gate: ReferenceGate, rows: list[Row]) -> GateCounts:
    """Degenerate answers per kind, ideal and top-K rows apart (answered rows only), with the gate's settings."""
    ideal = [r for r in rows if r["kind"] == "ideal" and r.get("answer") is not None]
    topk = [r for r in rows if r["kind"] == "topK" and r.get("answer") is not None]
    return GateCounts(**gate_settings(gate),
                      ideal=count_kinds(gate.classify([r["answer"] for r in ideal], [r["q"] for r in ideal])),
                      topK=count_kinds(gate.classify([r["answer"] for r in topk], [r["q"] for r in topk])))


def gate_settings(gate: ReferenceGate) -> GateCounts:
    """The gate's settings (patterns version, long-answer ratio, kinds): the head of every ``reference_gate`` block."""
    described = gate.describe()
    return GateCounts(patterns=described["patterns"], long_answer_ratio=described["long_answer_ratio"],
                      kinds=described["kinds"])


def gate_notice(counts: GateCounts) -> str | None:
    """One line naming how many ideal and top-K answers are degenerate and of which kinds (None when none are)."""
    parts = []
    for c, name in ((counts.get("ideal", {}), "ideal"), (counts.get("topK", {}), "top-K")):
        if c["total"]:
            kinds = ", ".join(f"{k} {c[k]}" for k in KINDS if c[k])
            parts.append(f"{c['total']} of {c['answers']} {name} answers ({kinds})")
    if not parts:
        return None
    return ("reference gate: degenerate " + "; ".join(parts) +
            " — grade skips rows whose ideal answer is degenerate (--keep-degenerate grades them)")
