"""``ragdiag sweep``: what each ANN operating point costs the answers (paper 000 §5.3, docs/methods.md#10-answer-sweep).

Same queries, corpus, generator and judge; only the index's search parameter changes. Steps:
embed corpus and queries (embedding cache), exact top-K by brute force, every operating point of
every index spec measured by :func:`ragdiag.bench.index_sweep.run_sweep` (recall vs exact,
Robustness-δ@K, batch QPS, single-query latency), then each distinct (query, ordered top-K)
answered and graded once (:mod:`ragdiag.answers.contexts`), the controls being exact k-NN, the gold
passages (the query's relevant passages, capped) and an empty context. Statistics:
:mod:`ragdiag.sweep.stats`.

Grades are against the dataset's reference answers with ``answers`` (``--answers FILE``), else against an
ideal answer generated from the relevant passages. Without dataset references the gold control would
grade the ideal answer against itself (always 5): it is not run, and ``meta.gold_control_informative``
says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag import __version__
from ragdiag.answers.contexts import (
    Answered,
    AnswerJob,
    CallsNeeded,
    Context,
    answer_all,
    check_budget,
    count_needed,
)
from ragdiag.answers.judging import GradingOptions, grading_prompts
from ragdiag.answers.plan import AnswerPlan, AnswerSettings
from ragdiag.bench.index_sweep import SweepOptions, run_sweep
from ragdiag.bench.intervals import recall_intervals
from ragdiag.bench.recall import DEFAULT_DELTAS, exact_ground_truth
from ragdiag.bench.timing import batch_qps, single_query_latency
from ragdiag.data.reference_answers import load_reference_answers
from ragdiag.data.reference_gate import count_kinds
from ragdiag.errors import RagdiagError
from ragdiag.io.progress import note
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.context_errors import PREFIX
from ragdiag.llm.prompts import load_prompt
from ragdiag.pipeline.corpus_inputs import CorpusData, load_corpus_data
from ragdiag.results.sweep import SweepResult
from ragdiag.retrieval.index_specs import expand_specs, parse_index_spec
from ragdiag.sweep import stats

CONTROLS = ("exact", "gold", "empty")
ACCURACY_THRESHOLD_RANGE = (1.0, 5.0)
GOLD_NOT_INFORMATIVE = ("gold control left out: without reference answers from the dataset (--answers FILE) its answer "
                        "is generated from the same passages as the ideal answer it is graded against, so it always "
                        "grades 5 and carries no signal")
SWEPT = ("efSearch", "nprobe", "refine")  # search-time parameters: the label of a point within its index
MIN_TIMED_QUERIES = 1000  # batch QPS from fewer timed query searches is mostly noise and per-call overhead
MAX_QPS_REPEATS = 200


def qps_repeats(n_queries: int, asked: int) -> int:
    """Batch-QPS repeats: at least ``asked``, raised (to at most 200) until ≥ 1,000 query searches are timed."""
    return max(asked, min(MAX_QPS_REPEATS, -(-MIN_TIMED_QUERIES // max(n_queries, 1))))


def qps_timing(n_queries: int, repeats: int) -> dict:
    """How the QPS numbers were timed, with a warning when the batch is under 1,000 queries."""
    timing = {"queries_per_batch": n_queries, "repeats": repeats, "timed_queries": n_queries * repeats,
              "spread": "min and max of the repeats (qps_batch_runs)", "warning": None}
    if n_queries < MIN_TIMED_QUERIES:
        timing["warning"] = (f"QPS is timed on batches of {n_queries} queries (< {MIN_TIMED_QUERIES:,}): per-call "
                             f"overhead weighs in and neighbouring points can differ by chance; {repeats} repeats, "
                             "spread shown as (min–max) — compare points by QPS only where the spreads do not overlap")
    return timing


@dataclass
class SweepConfig:
    corpus: Path
    index: list[str]
    queries: Path | None = None
    qrels: Path | None = None
    embedder: str = "local"
    k: int = 10
    controls: tuple[str, ...] = CONTROLS
    deltas: tuple[float, ...] = DEFAULT_DELTAS
    bootstrap: int = 1000
    seed: int = 0
    ideal_cap: int = 10
    max_drop: float | None = None
    max_calls: int | None = None
    max_queries: int | None = None
    latency_queries: int | None = 1000
    repeats: int = 3
    embed_base_url: str | None = None
    grading: GradingOptions = field(default_factory=GradingOptions)  # grade mode and reference gate (issue 20)
    answer: AnswerSettings | None = None  # --lang and the prompt budget (None: English prompts, no budget)
    answers: Path | None = None  # --answers: dataset reference answers (JSONL), graded against instead of the ideal
    accuracy_threshold: float = 4.0  # an answer is correct when its grade is at least this


@dataclass
class SweepOutcome:
    result: SweepResult
    per_query: list[dict[str, Any]]
    contexts: list[dict[str, Any]]
    data: CorpusData = field(repr=False)


def check_config(cfg: SweepConfig) -> None:
    """Ranges and choices, before any work."""
    if not cfg.index:
        raise RagdiagError("give at least one --index spec to sweep")
    for spec in expand_specs(cfg.index):
        parse_index_spec(spec)
    for name, value, low in (("--k", cfg.k, 1), ("--bootstrap", cfg.bootstrap, 0), ("--ideal-cap", cfg.ideal_cap, 1),
                             ("--repeats", cfg.repeats, 1)):
        if value < low:
            raise RagdiagError(f"{name} must be at least {low}, got {value}")
    if "exact" not in cfg.controls:
        raise RagdiagError("--controls must include exact: it is the baseline of every grade difference")
    unknown = [c for c in cfg.controls if c not in CONTROLS]
    if unknown:
        raise RagdiagError(f"unknown control '{unknown[0]}': expected exact, gold or empty")
    if cfg.max_drop is not None and cfg.max_drop < 0:
        raise RagdiagError(f"--max-drop must be at least 0, got {cfg.max_drop}")
    if cfg.max_calls is not None and cfg.max_calls < 0:
        raise RagdiagError(f"--max-calls must be at least 0, got {cfg.max_calls}")
    lo, hi = ACCURACY_THRESHOLD_RANGE
    if not (np.isfinite(cfg.accuracy_threshold) and lo <= cfg.accuracy_threshold <= hi):
        raise RagdiagError(f"--accuracy-threshold must be between {lo:g} and {hi:g}, got {cfg.accuracy_threshold}")


def load_answers(cfg: SweepConfig, data: CorpusData) -> tuple[CorpusData, dict[str, list[str]] | None, dict | None]:
    """With ``--answers``: the queries that have reference answers (then ``--max-queries``), their answers, and
    what was kept; without it, the data unchanged."""
    if cfg.answers is None:
        return data, None, None
    answers = load_reference_answers(cfg.answers)
    kept = [(q, t) for q, t in zip(data.query_ids, data.query_texts) if q in answers]
    if not kept:
        raise RagdiagError(f"--answers {cfg.answers}: no query of {data.files['queries']} with a relevant passage has "
                           f"an answer (answer ids look like '{next(iter(answers))}', queries like "
                           f"'{data.query_ids[0]}')")
    without = len(data.query_ids) - len(kept)
    if cfg.max_queries is not None:
        kept = kept[: cfg.max_queries]
    ids = [q for q, _ in kept]
    known = set(data.query_ids)
    info = {"file": str(cfg.answers), "queries_with_answers": len(ids),
            "queries_without_answers": without, "answer_ids_not_judged": sum(q not in known for q in answers),
            "answers_per_query": {"mean": float(np.mean([len(answers[q]) for q in ids])),
                                  "max": max(len(answers[q]) for q in ids)},
            "grading": "each answer graded against every usable reference answer; the highest grade is kept"}
    data = replace(data, query_ids=ids, query_texts=[t for _, t in kept],
                   relevant={q: data.relevant[q] for q in ids}, grades={q: data.grades[q] for q in ids},
                   files={**data.files, "answers": Path(cfg.answers)})
    return data, {q: answers[q] for q in ids}, info


def _labels(points: list[dict]) -> list[str]:
    """``hnsw efSearch=16``; build parameters join the label when two specs share a kind."""
    specs = {(p["index"], p["spec"]) for p in points}
    labels = []
    for point in points:
        swept = " ".join(f"{k}={v}" for k, v in point["params"].items() if k in SWEPT)
        shared = sum(1 for kind, _ in specs if kind == point["index"]) > 1
        build = ",".join(f"{k}={v}" for k, v in point["params"].items() if k not in SWEPT)
        labels.append(f"{point['index']}({build}) {swept}".strip() if shared else f"{point['index']} {swept}".strip())
    repeated = [label for label in labels if labels.count(label) > 1]
    if repeated:
        raise RagdiagError(f"operating point '{repeated[0]}' is swept twice: give each --index spec once")
    return labels


def _embed(cfg: SweepConfig, data: CorpusData, cache_dir: Path | None, progress: bool) -> tuple[np.ndarray, np.ndarray, str]:
    from ragdiag.retrieval.embedders import load_embedder
    from ragdiag.retrieval.indexes import prepare_vectors

    embedder = load_embedder(cfg.embedder, cache_dir, base_url=cfg.embed_base_url)
    base = prepare_vectors(embedder.encode(data.doc_texts, progress=progress), "cosine", f"embeddings of {data.files['corpus']}")
    queries = prepare_vectors(embedder.encode(data.query_texts, progress=progress), "cosine", "query embeddings")
    return base, queries, embedder.identity


def _exact_timing(base: np.ndarray, queries: np.ndarray, cfg: SweepConfig, repeats: int) -> tuple[dict, dict]:
    from ragdiag.retrieval.index_specs import parse_index_spec as parse
    from ragdiag.retrieval.indexes import build_index

    flat = build_index(parse("flat"), base, "ip")
    return (batch_qps(flat, queries, cfg.k, repeats=repeats),
            single_query_latency(flat, queries, cfg.k, n=cfg.latency_queries))


def run_answer_sweep(cfg: SweepConfig, llm: ClientConfig, progress: bool = True) -> SweepOutcome:
    """Measure every operating point and control; answer and grade; the result and its rows."""
    check_config(cfg)
    from ragdiag.remote.preflight import preflight

    preflight(embedders=[cfg.embedder], embed_base_url=cfg.embed_base_url, llm_base_url=llm.base_url,
              cache_mode=llm.cache)  # keys and servers before any embedding
    data = load_corpus_data(cfg.corpus, cfg.queries, cfg.qrels, cfg.max_queries if cfg.answers is None else None)
    data, references, answers_info = load_answers(cfg, data)
    if cfg.k > len(data.doc_ids):
        raise RagdiagError(f"--k {cfg.k} is larger than the {len(data.doc_ids)} passages of {data.files['corpus']}")
    specs = [parse_index_spec(s) for s in expand_specs(cfg.index)]
    clock = time.perf_counter()
    base, qvecs, embedder_id = _embed(cfg, data, llm.cache_dir, progress)
    seconds = {"embed": time.perf_counter() - clock}
    clock = time.perf_counter()
    _, exact_rows = exact_ground_truth(base, qvecs, cfg.k, "ip")
    repeats = qps_repeats(len(qvecs), cfg.repeats)
    exact_qps, exact_latency = _exact_timing(base, qvecs, cfg, repeats)
    options = SweepOptions(cfg.k, "ip", cfg.deltas, False, cfg.latency_queries, repeats, cfg.seed)
    points, recalls, point_rows = run_sweep(base, qvecs, specs, options, progress)
    seconds["index_sweep"] = time.perf_counter() - clock

    def ids(rows: np.ndarray) -> list[tuple[str, ...]]:
        return [tuple(data.doc_ids[i] for i in row if i >= 0) for row in rows]

    qids = data.query_ids
    series: dict[str, list[tuple[str, ...]]] = {"exact": ids(exact_rows)}
    gold_informative = references is not None
    if "gold" in cfg.controls and not gold_informative:
        note(GOLD_NOT_INFORMATIVE)
    if "gold" in cfg.controls and gold_informative:
        series["gold"] = [tuple(data.relevant[q][: cfg.ideal_cap]) for q in qids]
    if "empty" in cfg.controls:
        series["empty"] = [()] * len(qids)
    labels = _labels(points)
    for label, rows in zip(labels, point_rows):
        series[label] = ids(rows)
    owner: dict[Context, str] = {}
    for name, tops in series.items():  # controls first: a point reuses what exact already asked
        for q, top in zip(qids, tops):
            owner.setdefault(Context(q, top), name)
    job = AnswerJob(dict(zip(qids, data.query_texts)), lambda d: data.doc_texts[data.row_of[d]],
                    {q: data.relevant[q][: cfg.ideal_cap] for q in qids}, list(owner), grading=cfg.grading,
                    references=references)
    client = LLMClient(llm)
    try:
        if cfg.answer is not None:
            job.plan = AnswerPlan.resolve(cfg.answer, client)
            for line in job.plan.notices:
                note(line)
        needed: CallsNeeded | None = None
        if cfg.max_calls is not None:  # a dry pass over the cache: only when a budget is set
            needed = count_needed(client, job)
            check_budget(needed, cfg.max_calls)
        clock = time.perf_counter()
        answer_all(client, job, progress)
        seconds["answers"] = time.perf_counter() - clock
        client_stats = client.stats.to_json()
    finally:
        client.close()

    grades = {name: np.array([_grade(job, Context(q, top)) for q, top in zip(qids, tops)], dtype=float)
              for name, tops in series.items()}
    calls = {name: _calls(job, owner, name, qids, tops) for name, tops in series.items()}
    exact_g = grades["exact"]
    seed = cfg.seed
    threshold = cfg.accuracy_threshold
    out_points = []
    for i, (point, label) in enumerate(zip(points, labels)):
        g = grades[label]
        mean, ci = stats.mean_with_ci(g, cfg.bootstrap, seed)
        diff = stats.paired_difference(g, exact_g, cfg.bootstrap, seed)
        out_points.append({
            "label": label, "index": point["index"], "spec": point["spec"], "params": point["params"],
            "recall_mean": point["recall_mean"], "robustness": point["robustness"],
            **recall_intervals(recalls[i], cfg.deltas, cfg.bootstrap, seed),
            "zero_recall_queries": point["zero_recall_queries"], "recall_histogram": point["recall_histogram"],
            "qps_batch": point["qps_batch"]["median"], "qps_batch_runs": point["qps_batch"],
            "latency_ms": point["latency_ms"], "build_s": point["build_s"], "index_bytes": point["index_bytes"],
            "threads": point["threads"], "grade_mean": mean, "grade_ci": ci,
            "grade_diff_vs_exact": {"value": diff["value"], "ci": diff["ci"]}, "worse_share": diff["worse_share"],
            "n_pairs": diff["n_pairs"], "n_graded": int(np.isfinite(g).sum()), **calls[label],
            "accuracy": stats.accuracy(g, threshold),
        })
    controls = []
    for name in series:
        if name not in CONTROLS:
            continue
        mean, ci = stats.mean_with_ci(grades[name], cfg.bootstrap, seed)
        entry = {"name": name, "grade_mean": mean, "grade_ci": ci, "n_graded": int(np.isfinite(grades[name]).sum()),
                 **calls[name], "accuracy": stats.accuracy(grades[name], threshold)}
        if name == "exact":
            entry.update({"recall_mean": 1.0, "qps_batch": exact_qps["median"], "qps_batch_runs": exact_qps,
                          "latency_ms": exact_latency})
        controls.append(entry)
    recall_matrix = np.vstack([np.ones(len(qids)), *recalls])  # exact first, then the ANN points
    grade_matrix = np.vstack([exact_g, *(grades[label] for label in labels)])
    result: dict[str, Any] = {
        "meta": {**_meta(cfg, llm, data, embedder_id, needed, client_stats, len(owner)),
                 "qps_timing": qps_timing(len(qids), repeats),
                 "seconds": {k: round(v, 3) for k, v in seconds.items()}, "reference_gate": _gate_counts(job)},
        "points": out_points,
        "controls": controls,
        "delta_calibration": stats.delta_calibration(recall_matrix, grade_matrix, cfg.deltas, cfg.bootstrap, seed),
        "recall_buckets": stats.recall_buckets(np.vstack(recalls), np.vstack([grades[label] for label in labels])),
        "recommendation": stats.recommend(out_points, exact_qps["median"], cfg.max_drop),
        "relative_accuracy": stats.relative_accuracy(np.vstack(recalls), np.vstack([grades[label] for label in labels]),
                                                     exact_g, threshold, cfg.bootstrap, seed),
    }
    result["meta"].update({
        "graded_against": "dataset reference answers (--answers)" if references is not None
        else "ideal answer generated from the relevant passages",
        "answers": answers_info, "accuracy_threshold": threshold,
        **({"ideal": "not generated: every answer is graded against the dataset reference answers (--answers)"}
           if references is not None else {}),
        "gold_control_informative": gold_informative if "gold" in cfg.controls else None,
        "gold_control_note": None if gold_informative or "gold" not in cfg.controls else GOLD_NOT_INFORMATIVE,
    })
    per_query = []
    recall_of = {"exact": np.ones(len(qids)), **dict(zip(labels, recalls))}
    for name, tops in series.items():
        for j, (q, top) in enumerate(zip(qids, tops)):
            recall = recall_of.get(name)
            per_query.append({"point": name, "query": q, "recall": None if recall is None else float(recall[j]),
                              "grade": _finite(grades[name][j]), "ids": list(top)})
    contexts = [{"kind": "ideal", "query": q, "ids": job.ideal_docs[q], "answer": a.answer, "sent": a.sent,
                 "reused": a.reused, "error": a.error, **_plan_fields(a)} for q, a in job.ideal.items()]
    contexts += [{"kind": "reference", "query": q, "answers": answers, "usable": job.reference_answers(q),
                  "degenerate": job.ideal_kinds.get(q)} for q, answers in (references or {}).items()]
    contexts += [{"kind": "context", "query": c.query_id, "ids": list(c.doc_ids), "first_used_by": owner[c],
                  "answer": a.answer, "grade": a.grade, "sent": a.sent, "reused": a.reused, "error": a.error,
                  **({"reference_grades": a.reference_grades} if a.reference_grades is not None else {}),
                  **_plan_fields(a)} for c, a in job.answered.items()]
    if job.plan is not None:
        result["meta"]["answer_plan"] = {**job.plan.as_meta(),  # items failed for the context (answer or grade)
                                         "context_exceeded": sum(1 for c in contexts if (c.get("error") or "").startswith(PREFIX)),
                                         "references_cut": sum(1 for c in contexts if c.get("cut"))}
        suggestion = job.plan.suggestion()
        if suggestion:
            note(suggestion)
    return SweepOutcome(SweepResult.from_json(result), per_query, contexts, data)


def _gate_counts(job: AnswerJob) -> dict:
    """Degenerate ideal answers per kind and the contexts left unanswered because of them."""
    gate = job.grading.gate()
    answered = list(job.references) if job.references is not None else [q for q, a in job.ideal.items()
                                                                         if a.answer is not None]
    return {**gate.describe(), "ideal": count_kinds(job.ideal_kinds.get(q) for q in answered),
            "checked": "dataset reference answers" if job.references is not None else "ideal answers",
            "keep_degenerate": job.grading.keep_degenerate,
            "skipped_contexts": sum(1 for a in job.answered.values() if (a.error or "").startswith("degenerate "))}


def _plan_fields(answered: Answered) -> dict[str, Any]:
    """The question's language and, when the budget cut the references, what was cut."""
    fields: dict[str, Any] = {"lang": answered.lang} if answered.lang else {}
    if answered.cut:
        fields["cut"] = answered.cut
    return fields


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _grade(job: AnswerJob, context: Context) -> float:
    answered = job.answered.get(context)
    return np.nan if answered is None or answered.grade is None else answered.grade


def _calls(job: AnswerJob, owner: dict[Context, str], name: str, qids: list[str], tops: list[tuple[str, ...]]) -> dict:
    """Calls this series sent (contexts it asked first) and reused (cache, or asked by an earlier series)."""
    sent = reused = 0
    for q, top in zip(qids, tops):
        context = Context(q, top)
        answered = job.answered[context]
        if owner[context] == name:
            sent += answered.sent
            reused += answered.reused
        else:
            reused += answered.sent + answered.reused
    return {"calls_sent": sent, "calls_reused": reused}


def _meta(cfg: SweepConfig, llm: ClientConfig, data: CorpusData, embedder_id: str, needed: CallsNeeded | None,
          client_stats: dict,
          n_contexts: int) -> dict:
    return {
        "command": "ragdiag sweep", "ragdiag_version": __version__, "dataset": data.name,
        "corpus": str(data.files["corpus"]), "queries": str(data.files["queries"]), "qrels": str(data.files["qrels"]),
        "n_docs": len(data.doc_ids), "n_queries": len(data.query_ids), "k": cfg.k, "metric": "cosine",
        "embedder": embedder_id, "index_specs": list(cfg.index), "controls": list(cfg.controls),
        "deltas": list(cfg.deltas), "bootstrap": cfg.bootstrap, "confidence_level": stats.LEVEL, "seed": cfg.seed,
        "ideal": f"answer from the query's relevant passages (qrels score > 0, highest grade first), at most {cfg.ideal_cap}",
        "ideal_cap": cfg.ideal_cap, "gold_control": "the same passages as the ideal answer",
        "recall": "plain recall of the top-K against exact k-NN (faiss flat, inner product of unit vectors)",
        "calibration_points": "exact k-NN and every ANN operating point",
        "llm": {"provider": llm.provider, "model": llm.model, "temperature": llm.temperature, "seed": llm.seed},
        "prompts": [load_prompt("generation").id, *grading_prompts(cfg.grading.grade_mode).values()]
        + ([p for n in ("generation", "grading", "grading-repair") for p in cfg.answer.prompt_ids(n).values()
            if "-fr@" in p] if cfg.answer is not None and cfg.answer.lang != "en" else []),
        "grade_mode": cfg.grading.grade_mode,
        "distinct_contexts": n_contexts, "calls_needed_before_run": needed.block() if needed is not None else None, "calls": client_stats,
        "max_calls": cfg.max_calls, "max_drop": cfg.max_drop,
    }
