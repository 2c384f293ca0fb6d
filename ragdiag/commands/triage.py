"""``ragdiag triage``: why did a query's answer fail? Interventions smallest first.

:func:`run` checks options, inputs and outputs, loads the queries and their pools
(:mod:`ragdiag.triage.inputs`), costs the run before any call (``--max-calls``: a hard cap), runs the
baseline and the interventions (:mod:`ragdiag.triage.run`), and writes through :mod:`ragdiag.io.writer`
``triage.json`` (:class:`ragdiag.results.triage.TriageResult`, with the run record), ``per_query.jsonl``
and, with ``single-passage``, ``utility-qrels.tsv``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.answers.judging import GradingOptions, grading_prompts
from ragdiag.answers.plan import AnswerSettings
from ragdiag.data.qrels_runs import check_ids_fit
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import check_output_dir, write_json, write_jsonl, write_text
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.prompts import load_prompt
from ragdiag.results.triage import TriageMeta, TriageResult
from ragdiag.triage.inputs import TriageData, default_depth, needs_qrels
from ragdiag.triage.interventions import parse_interventions, sweep_ks
from ragdiag.triage.repeats import REPEATS_RANGE
from ragdiag.triage.run import Triage, TriageConfig, start
from ragdiag.triage.selection import parse_ids
from ragdiag.triage.sufficiency import free_prompts

__all__ = ["AnswerSettings", "ClientConfig", "GradingOptions", "TriageRequest", "TriageRun", "parse_ids",
           "parse_interventions", "run", "sweep_ks"]
FILES = {"result": "triage.json", "per_query": "per_query.jsonl", "utility": "utility-qrels.tsv"}
FAIL_BELOW_RANGE = (1.0, 5.0)


@dataclass
class TriageRequest(TriageConfig):
    """Every option of ``ragdiag triage``."""

    corpus: Path | None = None
    index_dir: Path | None = None  # instead of --corpus: the passages of an index folder
    queries: Path | None = None
    qrels: Path | None = None
    retriever: str = "bm25"
    texts: str | None = None
    ranked: str | None = None
    answers: Path | None = None
    answers_from: Path | None = None  # answers the user already has: the baseline is read, not generated
    depth: int | None = None
    max_queries: int | None = None
    bootstrap: int = 1000
    embed_base_url: str | None = None
    llm: ClientConfig = field(default_factory=ClientConfig)
    out_dir: Path = Path("triage")
    progress: bool = True
    run: Path | None = None  # with --corpus: the user's run gives the pools (no --retriever)
    ids: list[str] | None = None  # --ids: only these queries, in this order
    from_compare: Path | None = None  # --from-compare: compare's per-query file, its regressed queries


@dataclass
class TriageRun:
    result: TriageResult
    paths: dict[str, Path]
    summary: dict[str, Any]  # paid calls, the cost computed up front, queries left out by --max-calls


def _check(request: TriageRequest) -> list[Path]:
    """Options, inputs and outputs, before any work; the input files."""
    if sum(given is not None for given in (request.corpus, request.index_dir, request.texts)) != 1:
        raise RagdiagError("give one of --corpus DIR (with --retriever or --run), --index-dir DIR (with --queries, "
                           "--qrels and --run or --retriever) or --texts T --ranked R")
    if request.texts is not None and request.ranked is None:
        raise RagdiagError("--texts needs --ranked (the ranked candidates of each sample)")
    lo, hi = FAIL_BELOW_RANGE
    if not lo <= request.fail_below <= hi:
        raise RagdiagError(f"--fail-below must be between {lo:g} and {hi:g}, got {request.fail_below}")
    for name, value in (("--k", request.k), ("--ideal-cap", request.ideal_cap), *(("--k-sweep", c) for c in request.ks)):
        if value < 1:
            raise RagdiagError(f"{name} must be at least 1, got {value}")
    r_lo, r_hi = REPEATS_RANGE
    if not r_lo <= request.repeats <= r_hi:
        raise RagdiagError(f"--repeats must be between {r_lo} and {r_hi}, got {request.repeats}")
    if request.max_calls is not None and request.max_calls < 0:
        raise RagdiagError(f"--max-calls must be at least 0, got {request.max_calls}")
    if request.run is not None and request.texts is not None:
        raise RagdiagError("--run needs --corpus or --index-dir (the passages the run names); with --texts/--ranked the "
                           "ranking is given")
    if request.ids is not None and request.from_compare is not None:
        raise RagdiagError("give --ids or --from-compare, not both")
    if request.depth is not None and request.depth < request.k:
        raise RagdiagError(f"--depth {request.depth} is below --k {request.k}: the pool must hold the top K")
    _check_free(request)
    check_paths(inputs={"--degenerate-patterns": request.grading.degenerate_patterns, "--answers": request.answers,
                        "--answers-from": request.answers_from, "--run": request.run, "--from-compare": request.from_compare})
    request.grading.gate()
    check_output_dir(request.out_dir, "--out-dir")
    index = [request.index_dir / "manifest.json"] if request.index_dir is not None else []
    inputs = index + [p for p in (request.corpus, request.queries, request.qrels, request.answers, request.answers_from,
                          request.run, request.from_compare) if p is not None]
    inputs += [Path(p) for p in (request.texts, request.ranked) if p is not None and not str(p).startswith("hf:")]
    check_paths(inputs={str(p): p for p in inputs},
                outputs={f"--out-dir ({path.name})": path for path in _outputs(request).values()})
    return inputs


def _check_free(request: TriageRequest) -> None:
    """--reference-free against --answers, and --pool-k's range: above --k, at most the candidate pool."""
    if request.reference_free and request.answers is not None:
        raise RagdiagError("give --answers or --reference-free, not both: with reference answers the grades compare "
                           "with them")
    if request.pool_k is None:
        return
    pool = request.depth if request.depth is not None else default_depth(request.k, request.ks)
    if not request.k < request.pool_k <= pool:
        raise RagdiagError(f"--pool-k must be above --k {request.k} and at most the candidate pool ({pool}: --depth), "
                           f"got {request.pool_k}")


def _reference_free(request: TriageRequest, data: TriageData, references: object) -> bool:
    """The reference-free path: asked for, or neither reference answers nor a relevant passage for any query
    (no ideal answer can be built from the qrels); --pool-k only there, within the pool as loaded."""
    free = request.reference_free or (references is None and not any(q.relevant for q in data.queries))
    if request.pool_k is not None and not free:
        raise RagdiagError("--pool-k is the sufficient-context rater's pool, used only on the reference-free path "
                           "(no --answers and no qrels, or --reference-free); leave it out")
    if request.pool_k is not None and data.depth is not None and request.pool_k > data.depth:
        raise RagdiagError(f"--pool-k {request.pool_k} is larger than the candidate pool ({data.depth} passages); give "
                           f"--pool-k {data.depth} or less")
    if free and request.repeats > 1:
        raise RagdiagError(f"--repeats {request.repeats}: the reference-free path (no --answers and no qrels, or "
                           "--reference-free) grades each context once; leave out --repeats there")
    return free


def _chosen_ids(request: TriageRequest) -> list[str] | None:
    """The queries the user named: --ids, or compare's regressed queries (--from-compare), else None (all)."""
    if request.from_compare is not None:
        from ragdiag.triage.selection import regressed_ids

        return regressed_ids(request.from_compare)[0]
    return request.ids


def _outputs(request: TriageRequest) -> dict[str, Path]:
    """The files of this run in ``--out-dir`` (utility-qrels.tsv only with single-passage)."""
    single = "single-passage" in request.interventions
    return {name: request.out_dir / f for name, f in FILES.items() if name != "utility" or single}


def _check_utility_ids(request: TriageRequest, data: TriageData) -> None:
    """With single-passage, every id utility-qrels.tsv may hold fits TREC qrels (before any call)."""
    if "single-passage" not in request.interventions:
        return
    check_ids_fit("trec-qrels", [("query id", (q.id for q in data.queries)),
                                 ("passage id", (d for q in data.queries for d in q.pool[: request.k]))],
                  f"{FILES['utility']} is TREC qrels (qid 0 docid grade): leave single-passage out of --interventions")


def run(request: TriageRequest) -> TriageRun:
    """Checks, cost, baseline and interventions, then the files in ``out_dir``."""
    from ragdiag.data.reference_answers import load_reference_answers
    from ragdiag.triage.erag import trec_qrels
    from ragdiag.triage.given_answers import check_named, check_questions, read_given_answers
    from ragdiag.triage.inputs import load_corpus_queries, load_texts_ranked
    from ragdiag.triage.summary import build

    inputs = _check(request)
    references = load_reference_answers(request.answers) if request.answers is not None else None
    only = _chosen_ids(request)
    given, answers_from = None, request.answers_from
    if answers_from is not None:
        given = read_given_answers(answers_from, request.k)
        check_named(given, answers_from, only)
    if request.texts is None:
        data = load_corpus_queries(request.corpus, request.queries, request.qrels,
                                   set(references) if references is not None else None, request.retriever,
                                   request.depth, request.k, request.ks, request.max_queries, request.llm.cache_dir,
                                   request.embed_base_url, request.llm.seed or 0, run=request.run, only=only,
                                   given=None if given is None or answers_from is None else (set(given), answers_from),
                                   qrels_optional=references is None, index_dir=request.index_dir,
                                   progress=request.progress)
        if given is not None and answers_from is not None:
            check_questions(given, answers_from, data.queries)
    else:
        assert request.texts is not None and request.ranked is not None  # checked by _check
        data = load_texts_ranked(request.texts, request.ranked, request.depth or default_depth(request.k, request.ks),
                                 None if only or given is not None else request.max_queries)
        if only is not None:
            by_id = {q.id: q for q in data.queries}
            missing = [q for q in only if q not in by_id]
            if missing:
                raise RagdiagError(f"query '{missing[0]}' (--ids / --from-compare) is not a sample of --ranked {request.ranked}")
            data.queries = [by_id[q] for q in only][: request.max_queries]
        if references is not None:
            data.queries = [q for q in data.queries if q.id in references]
            if not data.queries:
                raise RagdiagError(f"--answers {request.answers}: no ranked sample has a reference answer")
        if given is not None and answers_from is not None:
            check_questions(given, answers_from, data.queries)
            data.queries = [q for q in data.queries if q.id in given][: request.max_queries]
    request.reference_free = _reference_free(request, data, references)
    if not request.reference_free:
        needs_qrels(data)
    _check_utility_ids(request, data)
    seed = request.llm.seed or 0
    record = start_run("ragdiag triage", inputs=inputs, models={"llm": request.llm.model},
                       prompts={"generation": load_prompt("generation").id, **(free_prompts() if request.reference_free
                                                                                else grading_prompts(request.grading.grade_mode))},
                       seeds={"seed": seed}, cache=request.llm.cache)
    client = LLMClient(request.llm)
    try:
        triage = Triage(data, request, references, client, request.progress,
                        given={q: a.answer for q, a in given.items()} if given is not None else None)
        start(triage, client)
        cost = triage.worst_case()
        triage.check_budget(cost)
        triage.announce(cost)
        triage.run()
        client_stats = client.stats.to_json()
    finally:
        client.close()
    meta = TriageMeta(
        ragdiag_version=__version__, dataset=data.name, retriever=data.retriever, n_queries=len(data.queries),
        k=request.k, depth=data.depth, k_sweep=list(request.ks), fail_below=request.fail_below,
        all=request.all_queries, interventions=list(request.interventions), exhaustive=request.exhaustive,
        ideal_cap=request.ideal_cap, bootstrap=request.bootstrap, seed=seed, repeats=request.repeats,
        intervals="queries and repeats" if request.repeats > 1 else "queries",
        graded_against="dataset reference answers (--answers)" if references is not None
        else "no reference: the reference-free rubric, causes from the sufficient-context rater" if request.reference_free
        else "ideal answer generated from the relevant passages",
        baseline="read from --answers-from (not generated)" if given is not None else "generated on the top K",
        fix="an intervention fixes a query when its grade reaches --fail-below or improves by at least 2",
        llm={"model": request.llm.model, "temperature": request.llm.temperature, "seed": request.llm.seed})
    result, rows, utility = build(triage, cost, request.bootstrap, seed, client_stats, meta)
    result.run_record = record.to_json()  # stamped once, on the typed result
    paths = {name: path for name, path in _outputs(request).items() if name != "utility" or utility is not None}
    write_json(paths["result"], result.to_json(), inputs=inputs)
    write_jsonl(paths["per_query"], rows, inputs=inputs)
    if utility is not None:
        write_text(paths["utility"], trec_qrels(utility), inputs=inputs)
    summary = {"paid": triage.paid(), "cost": cost, "left_out": sum(1 for s in triage.states if s.left_out)}
    return TriageRun(result, paths, summary)
