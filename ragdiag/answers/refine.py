"""``label --refine``: Plackett–Luce listwise refinement of each query's Top-N graded passages
(paper 001 §3.3.1, rag-gs S6; the algorithm in :mod:`ragdiag.evaluate.plackett_luce`).

Per query the graded pool is sorted by grade (ties in fused order), its Top-N is refined with
listwise judgements of ``batch`` passages, starting from θ = the grades (centred). Queries run in
parallel on the client's workers; within a query the rounds are sequential. Seeds are per query
(``seed`` + the query's position), so a rerun asks the same batches and hits the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypedDict

from ragdiag.answers.listwise import make_listwise_judge
from ragdiag.evaluate.plackett_luce import RefineOutcome, RefineParams, refine
from ragdiag.llm.client import LLMClient
from ragdiag.llm.runner import run_items


def top_by_grade(pool: Sequence[str], grades: dict[str, int], top_n: int) -> list[str]:
    """The graded passages of ``pool`` by grade, best first, ties in pool order; the first ``top_n``."""
    graded = [d for d in pool if d in grades]
    return sorted(graded, key=lambda d: -grades[d])[:top_n]


def refine_pools(client: LLMClient, query_ids: Sequence[str], query_texts: Sequence[str], doc_text: dict[str, str],
                 pools: Sequence[Sequence[str]], grades: dict[tuple[str, str], int], params: RefineParams,
                 progress: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per query a row (``query_id``, ``order``, ``theta``, ``se``, ``grades``, counts); and the failures."""
    texts = dict(zip(query_ids, query_texts))
    jobs = []
    for position, (q, pool) in enumerate(zip(query_ids, pools)):
        own = {d: grades[(q, d)] for d in pool if (q, d) in grades}
        top = top_by_grade(pool, own, params.top_n)
        if len(top) > 1:
            jobs.append((q, top, own, replace(params, seed=params.seed + position)))

    def run_one(job: tuple[str, list[str], dict[str, int], RefineParams]) -> RefineOutcome:
        q, top, own, own_params = job
        judge = make_listwise_judge(client, texts[q], doc_text, f"query {q}")
        return refine(top, judge, own_params, prior=[float(own[d]) for d in top])

    outcome = run_items(client, run_one, jobs, [f"query {q}" for q, *_ in jobs], "refining", progress)
    rows = []
    for (q, top, own, _), result in zip(jobs, outcome.results):
        if result is None:
            continue
        rows.append({"query_id": q, "initial": top, "grades": {d: own[d] for d in top}, **asdict(result)})
    return rows, outcome.failures


class RefineSection(TypedDict):
    """The label manifest's ``refine`` block: parameters, output, totals, failures and per-query counts."""

    params: dict[str, Any]
    output: str
    queries: int
    judgements: int
    failed_batches: int
    stable: int
    failures: list[dict[str, Any]]
    per_query: list[dict[str, Any]]


def refine_section(params: RefineParams, rows: list[dict[str, Any]], failures: list[dict[str, Any]],
                   path: Path) -> RefineSection:
    """The manifest's account of the refinement: parameters, totals and per-query counts."""
    return RefineSection(
        params=asdict(params), output=str(path), queries=len(rows),
        judgements=sum(r["judgements"] for r in rows), failed_batches=sum(r["failed"] for r in rows),
        stable=sum(1 for r in rows if r["stable_stop"]), failures=failures,
        per_query=[{k: r[k] for k in ("query_id", "rounds", "judgements", "failed", "locks", "stable_stop")}
                   for r in rows])
