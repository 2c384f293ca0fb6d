"""``ragdiag generate``: ideal answers (all positives) and top-K answers (first K ranked candidates).

Paper 003 appendix A.2 / docs/methods.md#9-generation-and-grading: the model answers only from the numbered references, given
in ranked order, each fenced as data (:func:`ragdiag.llm.prompts.fence_passages`). Output JSON
lines: one ``meta`` line, one ``ideal`` row per query, one ``topK`` row per (ranked sample, K) with
``rank`` (first K), ``inK``, ``P`` = n/K and ``R`` = n/Np. Ranked samples without texts and K > Nc
pairs are reported (count and first ids), never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.data.reference_gate import KINDS, ReferenceGate, count_kinds, make_gate
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.writer import write_json, write_jsonl
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.language import LANGS
from ragdiag.llm.output_limit import DEFAULT_ANSWER_TOKENS
from ragdiag.llm.prompts import Prompt
from ragdiag.llm.runner import run_items
from ragdiag.metrics.coverage import coverage_line, topk_coverage
from ragdiag.pipeline.answer_plan import AnswerPlan, AnswerSettings, answer_in_plan
from ragdiag.pipeline.run_meta import (
    LLMRunResult,
    RunManifest,
    RunMeta,
    RunSummary,
    guard_run_outputs,
    open_record,
    run_details,
    run_meta,
    summary,
    write_run_manifest,
)


@dataclass
class GenerateResult(LLMRunResult):
    """Answers written to the answers file (the manifest: meta, summary, failures, skipped)."""

    rows: list[dict[str, Any]] = field(default_factory=list)


def _candidate(sample: TextsSample, np_: int, index: int) -> str:
    """Candidate ``index`` of a ranked sample with ``np_`` positives: p[index] if index < Np, else n[index − Np]."""
    return sample.p[index] if index < np_ else sample.n[index - np_]


@dataclass
class Skipped:
    """Items left out of a run, reported (count and first ids) instead of dropped silently."""

    ranked_without_texts: list[str] = field(default_factory=list)
    k_above_nc: list[str] = field(default_factory=list)

    def as_dict(self, first: int = 5) -> dict[str, Any]:
        return {name: {"count": len(ids), "first": ids[:first]}
                for name, ids in (("ranked_without_texts", self.ranked_without_texts), ("k_above_nc", self.k_above_nc))}

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
              skipped: Skipped | None = None) -> list[dict[str, Any]]:
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
                ranked_source: str = "<ranked>", skipped: Skipped | None = None) -> list[dict[str, Any]]:
    """The rows to answer: one ideal row per query, then one top-K row per (ranked sample, K ≤ Nc)."""
    ideal = [{"kind": "ideal", "id": qid, "q": texts[qid].q} for qid in dict.fromkeys(r.id for r in ranked)
             if qid in texts]
    return ideal + topk_rows(texts, ranked, ks, ranked_source, skipped)


def generate_answers(texts: dict[str, TextsSample], rows: list[dict[str, Any]], client: LLMClient,
                     progress: bool = True, plan: AnswerPlan | None = None
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """Answer ``rows`` (from :func:`answer_rows`) in place with ``answer`` or ``error``, ``lang`` (the
    question's language) and ``cut`` (what the prompt budget cut, when it cut something); the
    failures; seconds."""
    plan = plan or AnswerPlan.resolve(AnswerSettings(lang="en"), client)

    def passages(row: dict[str, Any]) -> list[str]:
        sample = texts[row["id"]]
        return sample.p if row["kind"] == "ideal" else [_candidate(sample, row["Np"], i) for i in row["rank"]]

    for row in rows:
        row["lang"] = plan.lang_of(row["q"])

    def answer(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result, info = answer_in_plan(client, plan, row["q"], passages(row), _label(row), row["lang"])
        return result.text, info

    outcome = run_items(client, answer, rows, [_label(r) for r in rows], "generating", progress)
    for row, done, error in zip(rows, outcome.results, outcome.errors):
        if error is None:
            text, info = done
            row.update({"answer": text, **({"cut": info["cut"]} if "cut" in info else {})})
        else:
            row.update({"answer": None, "error": error})
    return rows, outcome.failures, outcome.seconds


def answer_from_references(client: LLMClient, prompt: Prompt, query: str, passages: list[str], label: str,
                           max_tokens: int = DEFAULT_ANSWER_TOKENS):
    """One generation call: the query and its references, in ranked order, through the cached client
    (identical prompts are one cache entry, which is how ``sweep`` reuses answers across points);
    ``max_tokens``: the output limit (``--max-answer-tokens``)."""
    messages = prompt.messages(query=query, references=passages)
    return client.chat(client.request(messages, prompt.id, max_tokens=max_tokens), label)


def _label(row: dict[str, Any]) -> str:
    if row["kind"] == "ideal":
        return f"ideal {row['id']}"
    return f"topK {row['id']} E={row['E']} Nc={row['Nc']} Np={row['Np']} K={row['K']}"


def _used_prompts(plan: AnswerPlan, rows: list[dict[str, Any]]) -> list[str]:
    """The prompt versions the rows were asked with (English first)."""
    return [plan.prompt(lang).id for lang in LANGS if any(r.get("lang") == lang for r in rows)] or \
        [plan.prompt("en").id]


def _plan_summary(plan: AnswerPlan, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Languages chosen, items whose references were cut, calls that exceeded the model's context."""
    langs = {lang: sum(1 for r in rows if r.get("lang") == lang) for lang in LANGS}
    extra: dict[str, Any] = {"lang": {"setting": plan.settings.lang, **langs}}
    if plan.settings.max_prompt_tokens is not None:
        extra["references_cut"] = sum(1 for r in rows if r.get("cut"))
    extra["context_exceeded"] = len(plan.context_errors)
    if plan.refits:
        extra["context_refits"] = plan.refits
    return extra


def _plan_lines(plan: AnswerPlan, rows: list[dict[str, Any]], settings: AnswerSettings) -> list[str]:
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


def run_generate(texts_source: str, ranked_source: str | None, ks: list[int], dataset: str, out: Path,
                 config: ClientConfig, rank_with: str | None = None, ranked_out: Path | None = None,
                 progress: bool = True, notice: Callable[[str], None] | None = None,
                 gate: ReferenceGate | None = None, settings: AnswerSettings | None = None) -> GenerateResult:
    """Load, optionally rank, generate, write ``out`` and its manifest (meta, summary, failures, skipped).

    Every output is checked against every input before any work; skipped items go to ``notice``
    (default: a line on stderr) and to the manifest. The reference-quality gate counts degenerate
    ideal and top-K answers per kind (``summary.reference_gate``, one notice line when any).
    ``settings``: the question's language and the prompt budget (:mod:`ragdiag.pipeline.answer_plan`).
    """
    if (ranked_source is None) == (rank_with is None):
        raise RagdiagError("give exactly one source of rankings: ranked samples, or an embedder to rank the texts' candidates")
    if rank_with is not None:
        ranked_out = ranked_out or out.with_name(out.name.split(".")[0] + ".ranked.json")
    input_paths = [texts_source, ranked_source]
    manifest = guard_run_outputs([out, ranked_out if rank_with else None], input_paths)
    notice = notice or stderr_notice
    gate = gate or make_gate()
    settings = settings or AnswerSettings()
    record = open_record("generate", config, input_paths, settings.prompt_ids())
    texts = load_texts(texts_source, dataset)
    by_id = {s.id: s for s in texts.samples}
    inputs: dict[str, Any] = {"texts": {"source": texts.source, "sha256": texts.sha256}}
    skipped = Skipped()
    if rank_with is not None:
        from ragdiag.pipeline.rank import rank_texts

        ranked = rank_texts(texts.samples, rank_with, ks, config.cache_dir, progress)
        write_json(ranked_out, [r.to_dict() for r in ranked], inputs=input_paths[:1])
        inputs["ranked"] = {"ranked_with": rank_with, "written_to": str(ranked_out)}
    else:
        loaded = load_ranked(ranked_source, dataset)
        ranked = [r for r in loaded.samples if r.id in by_id]
        skipped.ranked_without_texts = [r.id for r in loaded.samples if r.id not in by_id]
        if not ranked:
            raise RagdiagError(f"{loaded.source}: no ranked sample has a texts sample in {texts.source}")
        inputs["ranked"] = {"source": loaded.source, "sha256": loaded.sha256}
    rows = answer_rows(by_id, ranked, ks, str(ranked_source), skipped)
    if not any(r["kind"] == "topK" for r in rows):
        raise RagdiagError(f"no ranked sample has Nc ≥ any of the cut-offs K = {ks}: nothing to answer")
    for line in skipped.notices(texts.source):
        notice(line)
    client = LLMClient(config)
    try:
        plan = AnswerPlan.resolve(settings, client)
        for line in plan.notices:
            notice(line)
        shown = len(plan.notices)
        rows, failures, seconds = generate_answers(by_id, rows, client, progress, plan)
        done = sum(1 for r in rows if r["answer"] is not None)
        answered = topk_coverage(rows, lambda r: r["answer"] is not None)
        gate_counts = gate_counts_of(gate, rows)
        result_summary = summary(client, len(rows), done, seconds, skipped=skipped.as_dict(),
                                 coverage_by_K=answered, reference_gate=gate_counts, **_plan_summary(plan, rows))
        used = _used_prompts(plan, rows)
        record.prompts = {prompt.split("@")[0]: prompt for prompt in used}  # the versions the rows were asked with
        record.prompts[gate.patterns.source.split("@")[0]] = gate.patterns.source
        meta = run_meta("generate", client, prompts=used, k=ks, dataset=dataset, **inputs, **plan.as_meta())
        details = run_details(client)
    finally:
        client.close()
    gate_line = gate_notice(gate_counts)
    for line in ([*plan.notices[shown:], *_plan_lines(plan, rows, settings)]
                 + ([coverage_line(answered)] if answered["uneven"] else []) + ([gate_line] if gate_line else [])):
        notice(line)
    write_jsonl(out, [{"kind": "meta", "meta": meta}, *rows], inputs=input_paths)
    written = write_run_manifest(manifest, record, input_paths, RunManifest(
        meta=RunMeta.from_json(meta), run=details, summary=RunSummary.from_json(result_summary), failures=failures,
        skipped=skipped.as_dict()))
    return GenerateResult(written, manifest, rows=rows)


def gate_counts_of(gate: ReferenceGate, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Degenerate answers per kind, ideal and top-K rows apart (answered rows only), with the gate's settings."""
    counts: dict[str, Any] = gate.describe()
    for kind in ("ideal", "topK"):
        answered = [r for r in rows if r["kind"] == kind and r.get("answer") is not None]
        counts[kind] = count_kinds(gate.classify([r["answer"] for r in answered], [r["q"] for r in answered]))
    return counts


def gate_notice(counts: dict[str, Any]) -> str | None:
    """One line naming how many ideal and top-K answers are degenerate and of which kinds (None when none are)."""
    parts = []
    for kind, name in (("ideal", "ideal"), ("topK", "top-K")):
        c = counts[kind]
        if c["total"]:
            kinds = ", ".join(f"{k} {c[k]}" for k in KINDS if c[k])
            parts.append(f"{c['total']} of {c['answers']} {name} answers ({kinds})")
    if not parts:
        return None
    return ("reference gate: degenerate " + "; ".join(parts) +
            " — grade skips rows whose ideal answer is degenerate (--keep-degenerate grades them)")


def stderr_notice(text: str) -> None:
    """A ``note: …`` line on stderr (yellow on a terminal)."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"note: {text}", style="yellow", highlight=False)
