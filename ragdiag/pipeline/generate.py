"""``ragdiag generate``: ideal answers (all positives) and top-K answers (first K ranked candidates).

Paper 003 appendix A.2 / METHODS.md §9: the model answers only from the numbered references, given
in ranked order. Output JSON lines: one ``meta`` line, one ``ideal`` row per query, one ``topK``
row per (ranked sample, K) with ``rank`` (first K), ``inK``, ``P`` = n/K and ``R`` = n/Np.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
from ragdiag.errors import DataError, RagdiagError
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.prompts import Prompt, load_prompt
from ragdiag.llm.runner import run_items
from ragdiag.pipeline.run_meta import manifest_path, run_details, run_meta, summary, write_json, write_jsonl


@dataclass
class GenerateResult:
    """Rows written to the answers file, the run summary and the failure manifest."""

    rows: list[dict[str, Any]]
    meta: dict[str, Any]
    summary: dict[str, Any]
    failures: list[dict[str, Any]]
    manifest: Path


def parse_ks(text: str) -> list[int]:
    """``"2,3,5"`` → [2, 3, 5] (positive, sorted, unique)."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise RagdiagError(f"--k expects comma-separated integers such as 2,3,5, got '{text}'") from None
    if not ks or ks[0] < 1:
        raise RagdiagError(f"--k needs positive cut-offs, got '{text}'")
    return ks


def references(texts: list[str]) -> str:
    """Numbered references ``[1] ...`` in the given (ranked) order."""
    return "\n".join(f"[{i}] {t}" for i, t in enumerate(texts, start=1))


def _candidate(sample: TextsSample, np_: int, index: int) -> str:
    """Candidate ``index`` of a ranked sample with ``np_`` positives: p[index] if index < Np, else n[index − Np]."""
    return sample.p[index] if index < np_ else sample.n[index - np_]


def topk_rows(texts: dict[str, TextsSample], ranked: list[RankedSample], ks: list[int], source: str) -> list[dict[str, Any]]:
    """One row per (ranked sample, K ≤ Nc), checked against its texts sample.

    A ranked sample uses the first Np positives and the first Nc − Np negatives of its texts sample
    (paper 003 appendix A.1: several (Nc, Np) variants share one query).
    """
    rows = []
    for index, r in enumerate(ranked):
        sample = texts.get(r.id)
        if sample is None:
            raise DataError.at(source, index, "id", f"'{r.id}' has no texts sample")
        if r.Np > len(sample.p) or r.Nc - r.Np > len(sample.n):
            raise DataError.at(source, index, "Nc", f"Np={r.Np}, Nc={r.Nc} need more candidates than texts sample "
                               f"'{r.id}' has ({len(sample.p)} positives, {len(sample.n)} negatives)")
        for k in ks:
            if k > r.Nc:
                continue
            top = r.rank[:k]
            in_k = [1 if i < r.Np else 0 for i in top]
            rows.append({"kind": "topK", "id": r.id, "E": r.E, "Nc": r.Nc, "Np": r.Np, "K": k, "rank": top,
                         "inK": in_k, "P": sum(in_k) / k, "R": sum(in_k) / r.Np, "q": sample.q})
    return rows


def generate_answers(texts: dict[str, TextsSample], ranked: list[RankedSample], ks: list[int], client: LLMClient,
                     ranked_source: str = "<ranked>", progress: bool = True) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """Answer rows (ideal first, then top-K) with ``answer`` or ``error``; the failures; seconds."""
    prompt = load_prompt("generation")
    ideal = [{"kind": "ideal", "id": qid, "q": texts[qid].q} for qid in dict.fromkeys(r.id for r in ranked)
             if qid in texts]
    rows = ideal + topk_rows(texts, ranked, ks, ranked_source)

    def passages(row: dict[str, Any]) -> list[str]:
        sample = texts[row["id"]]
        return sample.p if row["kind"] == "ideal" else [_candidate(sample, row["Np"], i) for i in row["rank"]]

    def answer(row: dict[str, Any]) -> str:
        return _ask(client, prompt, row["q"], passages(row), _label(row)).text

    outcome = run_items(client, answer, rows, [_label(r) for r in rows], "generating", progress)
    for row, text, error in zip(rows, outcome.results, outcome.errors):
        row.update({"answer": text} if error is None else {"answer": None, "error": error})
    return rows, outcome.failures, outcome.seconds


def _ask(client: LLMClient, prompt: Prompt, query: str, passages: list[str], label: str):
    messages = prompt.messages(query=query, references=references(passages))
    return client.chat(client.request(messages, prompt.id), label)


def _label(row: dict[str, Any]) -> str:
    if row["kind"] == "ideal":
        return f"ideal {row['id']}"
    return f"topK {row['id']} E={row['E']} Nc={row['Nc']} Np={row['Np']} K={row['K']}"


def run_generate(texts_source: str, ranked_source: str | None, ks: list[int], dataset: str, out: Path,
                 config: ClientConfig, rank_with: str | None = None, ranked_out: Path | None = None,
                 progress: bool = True) -> GenerateResult:
    """Load, optionally rank, generate, write ``out`` and its manifest (meta, summary, failures)."""
    if (ranked_source is None) == (rank_with is None):
        raise RagdiagError("give exactly one of --ranked FILE or --rank-with EMBEDDER")
    texts = load_texts(texts_source, dataset)
    by_id = {s.id: s for s in texts.samples}
    inputs: dict[str, Any] = {"texts": {"source": texts.source, "sha256": texts.sha256}}
    if rank_with is not None:
        from ragdiag.pipeline.rank import rank_texts

        ranked = rank_texts(texts.samples, rank_with, ks, config.cache_dir, progress)
        ranked_out = ranked_out or out.with_name(out.name.split(".")[0] + ".ranked.json")
        write_json(ranked_out, [r.to_dict() for r in ranked])
        inputs["ranked"] = {"ranked_with": rank_with, "written_to": str(ranked_out)}
    else:
        loaded = load_ranked(ranked_source, dataset)
        ranked = [r for r in loaded.samples if r.id in by_id]
        if not ranked:
            raise RagdiagError(f"{loaded.source}: no ranked sample has a texts sample in {texts.source}")
        inputs["ranked"] = {"source": loaded.source, "sha256": loaded.sha256}
    client = LLMClient(config)
    try:
        rows, failures, seconds = generate_answers(by_id, ranked, ks, client, str(ranked_source), progress)
        done = sum(1 for r in rows if r["answer"] is not None)
        result_summary = summary(client, len(rows), done, seconds)
        meta = run_meta("generate", client, prompts=[load_prompt("generation").id], k=ks, dataset=dataset, **inputs)
        details = run_details(client)
    finally:
        client.close()
    write_jsonl(out, [{"kind": "meta", "meta": meta}, *rows])
    manifest = manifest_path(out)
    write_json(manifest, {"meta": meta, "run": details, "summary": result_summary, "failures": failures})
    return GenerateResult(rows, meta, result_summary, failures, manifest)
