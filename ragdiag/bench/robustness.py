"""Robustness-δ@K beside average recall and speed, for vector indexes (against exact search) or for
one or more retrieval runs (against relevance labels; each run is one point labelled by its file name):
the computation behind ``ragdiag robustness`` (:mod:`ragdiag.commands.robustness` checks, records and
writes).

Result: ``{"meta": {...}, "points": [...]}`` (:class:`ragdiag.results.robustness.RobustnessResult`)
and per-query rows ``{"point": i, "query": j, "recall": r, "ids": [...]}`` that reproduce every
reported mean and fraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag import __version__
from ragdiag.bench.constraints import parse_constraint, required_deltas, select
from ragdiag.bench.hardness import DEFAULT_LID_K
from ragdiag.bench.index_sweep import SweepOptions
from ragdiag.bench.intervals import DEFAULT_BOOTSTRAP, recall_intervals
from ragdiag.bench.recall import DEFAULT_DELTAS, summarise
from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels, read_run, run_depth, run_ids
from ragdiag.errors import RagdiagError
from ragdiag.io.files import file_sha256
from ragdiag.io.npy_input import read_npy
from ragdiag.io.run_record import describe_input
from ragdiag.results.robustness import RobustnessResult
from ragdiag.retrieval.index_specs import expand_specs
from ragdiag.retrieval.indexes import prepare_vectors


@dataclass
class RobustnessOptions:
    k: int = 10
    metric: str = "ip"
    index: list[str] = field(default_factory=lambda: ["flat"])
    deltas: tuple[float, ...] = DEFAULT_DELTAS
    base: Path | None = None
    queries: Path | None = None
    corpus: Path | None = None
    query_texts: Path | None = None
    embedder: str = "local"
    run: Path | list[Path] | None = None  # one run or several, compared side by side
    qrels: Path | None = None
    tie_aware: bool = False
    latency_queries: int | None = 1000
    repeats: int = 3
    pg_builds: int = 1  # builds of each pg-ivfflat / pg-hnsw index (pgvector's build is not seedable)
    seed: int = 0
    threads: int | None = None
    cache_dir: Path | None = None
    base_url: str | None = None
    device: str = "cpu"
    batch_size: int | None = None
    backend: str = "faiss"  # or pgvector:postgresql://… / pgvector:embedded[:DIR] (pg-* specs)
    cache_mode: str | None = None  # rw|replay|off|refresh for the embedding cache (None: rw)
    bootstrap: int = DEFAULT_BOOTSTRAP  # resamples of queries for the 95% intervals
    match_recall: float | None = None  # target average recall for metrics at matched recall
    require: list[str] = field(default_factory=list)  # constraints such as 'recall>=0.9' (constrained selection)
    min_recall: float | None = None  # keep only points whose average recall reaches this floor
    hardness: bool = False  # per-query relative contrast and LID, and their rank correlation with recall
    lid_k: int = DEFAULT_LID_K  # neighbours of the LID estimate
    adaptive: str | None = None  # 'FIRST:SECOND' efSearch/nprobe of adaptive search (paper 000 §6)


def _load_npy(path: Path, flag: str) -> np.ndarray:
    return read_npy(path, flag)


def _vectors(opts: RobustnessOptions, progress: bool) -> tuple[np.ndarray, np.ndarray, dict]:
    """Base and query vectors, from .npy files or embedded texts, and their provenance."""
    if opts.base and opts.queries:
        base = prepare_vectors(_load_npy(opts.base, "base vectors"), opts.metric, f"base vectors {opts.base}")
        queries = prepare_vectors(_load_npy(opts.queries, "query vectors"), opts.metric, f"query vectors {opts.queries}")
        files = {"base": str(opts.base), "base_sha256": file_sha256(opts.base),
                 "queries": str(opts.queries), "queries_sha256": file_sha256(opts.queries)}
        return base, queries, files
    if opts.corpus and opts.query_texts:
        from ragdiag.retrieval.embedders import load_embedder

        embedder, query_embedder = (load_embedder(opts.embedder, opts.cache_dir, base_url=opts.base_url, role=role,
                                                  device=opts.device, batch_size=opts.batch_size,
                                                  cache_mode=opts.cache_mode)
                                    for role in ("passage", "query"))
        _, docs = load_corpus(opts.corpus)
        _, texts = load_queries(opts.query_texts)
        base = prepare_vectors(embedder.encode(docs, progress=progress), opts.metric, f"embeddings of {opts.corpus}")
        queries = prepare_vectors(query_embedder.encode(texts, progress=progress), opts.metric, "query embeddings")
        files = {"corpus": str(opts.corpus), "corpus_sha256": describe_input(opts.corpus)["sha256"],
                 "query_texts": str(opts.query_texts), "query_texts_sha256": file_sha256(opts.query_texts),
                 "embedder": embedder.identity}
        return base, queries, files
    raise RagdiagError("no input: give base and query vectors (.npy), or a corpus and queries to embed, "
                       "or a run and its qrels")


def run_paths(opts: RobustnessOptions) -> list[Path]:
    """The run files of ``opts`` as a list (``run`` may be one path or several)."""
    if opts.run is None:
        return []
    return [Path(opts.run)] if isinstance(opts.run, (str, Path)) else [Path(p) for p in opts.run]


def input_paths(opts: RobustnessOptions) -> list[Path]:
    """Every input file of ``opts``: outputs must not overwrite any of them."""
    return [Path(p) for p in (opts.base, opts.queries, opts.corpus, opts.query_texts, opts.qrels) if p] + run_paths(opts)


def _run_labels(paths: list[Path]) -> list[str]:
    """Each run's file name, or its full path where two runs share a name."""
    names = [p.name for p in paths]
    return [p.name if names.count(p.name) == 1 else str(p) for p in paths]


MAX_NAMED = 50  # query ids named per run in the JSON (the count is always whole)


def _labelled(opts: RobustnessOptions) -> tuple[list[dict], list[dict], dict]:
    """One point per run against qrels: R_i = n_i / Np_i over queries with a relevant passage."""
    paths = run_paths(opts)
    if len(set(map(str, paths))) != len(paths):
        raise RagdiagError("the same run file is given twice")
    runs = [read_run(p) for p in paths]
    for path, run in zip(paths, runs):
        if opts.k > run_depth(run):
            raise RagdiagError(f"k={opts.k} is larger than the depth of run {path} (at most {run_depth(run)} "
                               "passages per query): recall@k would be recall at a smaller cut-off; lower k or retrieve deeper")
    if opts.qrels is None:  # commands/robustness checks it first
        raise RagdiagError("--run and --qrels go together")
    qrels_path = opts.qrels
    qrels = read_qrels(qrels_path)
    judged = {q: {d for d, s in rels.items() if s > 0} for q, rels in qrels.items()}
    judged = {q: rel for q, rel in judged.items() if rel}
    if not judged:
        raise RagdiagError(f"{qrels_path}: no query has a relevant passage (score > 0)")
    query_ids = sorted(judged)
    points, rows, described = [], [], []
    for i, (path, label, scored) in enumerate(zip(paths, _run_labels(paths), runs)):
        ranked = run_ids(scored)
        recalls = []
        for j, query_id in enumerate(query_ids):
            ids = ranked.get(query_id, [])[: opts.k]
            recall = sum(d in judged[query_id] for d in ids) / len(judged[query_id])
            recalls.append(recall)
            rows.append({"point": i, "query": j, "query_id": query_id, "recall": recall, "ids": ids})
        points.append({"index": "run", "spec": str(path), "label": label, "params": {},
                       **summarise(np.asarray(recalls), opts.k, opts.deltas),
                       "recall_kind": "labelled (n/Np)", "qps_batch": None, "latency_ms": None, "build_s": None,
                       "index_bytes": None, "threads": None})
        unjudged = sorted(q for q in ranked if q not in judged)  # ranked, but no relevant passage in the qrels: left out
        described.append({"path": str(path), "label": label, "sha256": file_sha256(path), "depth": run_depth(scored),
                          "queries_missing_from_run": sum(q not in ranked for q in query_ids),
                          "queries_without_qrels": len(unjudged),
                          "queries_without_qrels_ids": unjudged[:MAX_NAMED]})
    files: dict = {"qrels": str(qrels_path), "qrels_sha256": file_sha256(qrels_path), "runs": described}
    if len(paths) == 1:  # the single-run keys of earlier versions
        files.update({"run": described[0]["path"], "run_sha256": described[0]["sha256"],
                      "queries_missing_from_run": described[0]["queries_missing_from_run"]})
    return points, rows, files


def resolved(opts: RobustnessOptions) -> RobustnessOptions:
    """``opts`` with the δ values the ``--require`` constraints name added and the index specs expanded."""
    constraints = [parse_constraint(text) for text in opts.require]
    return replace(opts, deltas=tuple(sorted(set(opts.deltas) | set(required_deltas(constraints)))),
                   index=expand_specs(opts.index))


def check_index_specs(opts: RobustnessOptions) -> None:
    """The index specs of :func:`resolved` ``opts`` parsed, and a pgvector backend reachable when a
    ``pg-`` spec needs one (vectors and texts only: runs have no index)."""
    if opts.run or opts.qrels:
        return
    from ragdiag.bench.pgvector_sweep import check_specs
    from ragdiag.retrieval.pgvector_server import parse_backend

    check_specs(opts.index, parse_backend(opts.backend))


def measure(opts: RobustnessOptions, progress: bool = False) -> tuple[RobustnessResult, list[dict[str, Any]]]:
    """(result: ``meta``, ``points``, analyses…; per-query rows) for the checked and :func:`resolved`
    inputs in ``opts``; the command stamps the run record. Without bootstrap resamples
    (``opts.bootstrap == 0``) the points carry no intervals."""
    constraints = [parse_constraint(text) for text in opts.require]
    if opts.run or opts.qrels:
        points, rows, files = _labelled(opts)
        mode, shape, analyses = "labelled", {}, {}
    else:
        from ragdiag.bench.pgvector_sweep import run_backend_sweep
        from ragdiag.retrieval.pgvector_server import parse_backend

        backend = parse_backend(opts.backend)
        if opts.threads is not None:
            import faiss

            faiss.omp_set_num_threads(opts.threads)
        base, queries, files = _vectors(opts, progress)
        sweep = SweepOptions(opts.k, opts.metric, opts.deltas, opts.tie_aware, opts.latency_queries, opts.repeats, opts.seed)
        points, recalls, ids, pg_meta = run_backend_sweep(base, queries, opts.index, backend, sweep, progress,
                                                          opts.pg_builds)
        analyses = _ann_analyses(opts, base, queries, points, recalls, ids)
        rows = [{"point": i, "query": j, "recall": float(r), "ids": [int(x) for x in ids[i][j]]}
                for i in range(len(points)) for j, r in enumerate(recalls[i])]
        import faiss

        mode, shape = "ann", {"n_base": int(base.shape[0]), "n_queries": int(queries.shape[0]),
                              "dim": int(base.shape[1]), "faiss_version": faiss.__version__,
                              "backend": backend.describe(), **({"pgvector": pg_meta} if pg_meta else {})}
    for i, point_recall in enumerate(point_recalls(rows, len(points)) if opts.bootstrap else []):
        points[i].update(recall_intervals(point_recall, opts.deltas, opts.bootstrap, opts.seed))
    meta = {
        "command": "ragdiag robustness",
        "ragdiag_version": __version__,
        "mode": mode,
        "ground_truth": "relevance labels (qrels)" if mode == "labelled" else "exact search (faiss flat)",
        "recall": "labelled n/Np" if mode == "labelled" else ("tie-aware (rtol 1e-6)" if opts.tie_aware else "plain"),
        "k": opts.k,
        "metric": opts.metric,
        "deltas": list(opts.deltas),
        "seed": opts.seed,
        "bootstrap": {"resamples": opts.bootstrap, "confidence_level": 0.95, "method": "percentile, queries resampled",
                      "seed": opts.seed},
        **({"pg_builds": opts.pg_builds} if mode == "ann" and opts.pg_builds > 1 else {}),
        "index_specs": opts.index if mode == "ann" else [],
        **shape,
        **files,
    }
    if opts.min_recall is not None:
        points, rows, meta["min_recall"] = _above_floor(points, rows, opts.min_recall)
    if constraints:
        analyses["selection"] = select(points, constraints, [point_label(p) for p in points])
    return RobustnessResult.from_json({"meta": meta, "points": points, **analyses}), rows


def _above_floor(points: list[dict], rows: list[dict], floor: float) -> tuple[list[dict], list[dict], dict]:
    """The points whose average recall reaches ``floor`` (per-query rows renumbered), and what was dropped."""
    kept = [i for i, p in enumerate(points) if p["recall_mean"] >= floor - 1e-12]
    new = {old: j for j, old in enumerate(kept)}
    rows = [{**r, "point": new[r["point"]]} for r in rows if r["point"] in new]
    dropped = [{"index": p["index"], "params": p["params"], "recall_mean": p["recall_mean"]}
               for i, p in enumerate(points) if i not in new]
    return [points[i] for i in kept], rows, {"floor": floor, "dropped_points": dropped}


def _ann_analyses(opts: RobustnessOptions, base: np.ndarray, queries: np.ndarray, points: list[dict],
                  recalls: list[np.ndarray], ids: list[np.ndarray]) -> dict:
    """The optional analyses over every measured point (before any --min-recall filter)."""
    out: dict = {}
    if opts.match_recall is not None:
        from ragdiag.bench.matched_recall import matched_recall
        from ragdiag.bench.recall import exact_ground_truth

        _, true_ids = exact_ground_truth(base, queries, opts.k, opts.metric)
        out["matched_recall"] = matched_recall(points, recalls, ids, true_ids, opts.deltas, opts.match_recall,
                                               opts.bootstrap, opts.seed)
    if opts.adaptive is not None:
        from ragdiag.bench.adaptive import parse_adaptive, run_adaptive
        from ragdiag.retrieval.index_specs import parse_index_spec

        specs = [parse_index_spec(s) for s in opts.index if not s.startswith("pg-")]
        out["adaptive"] = run_adaptive(base, queries, specs, opts.k, opts.metric, *parse_adaptive(opts.adaptive),
                                       opts.deltas, opts.seed, opts.repeats)
    if opts.hardness:
        from ragdiag.bench.hardness import hardness_report

        out["hardness"] = hardness_report(base, queries, recalls, [point_label(p) for p in points], opts.lid_k)
    return out


def point_label(point: dict) -> str:
    """``hnsw M=16,efConstruction=100,efSearch=32``, or a run's label."""
    return point.get("label") or f"{point['index']} {','.join(f'{a}={b}' for a, b in point['params'].items())}".strip()


def point_recalls(rows: list[dict], n_points: int) -> list[np.ndarray]:
    """Per operating point, its per-query recalls in query order (from the per-query rows)."""
    out: list[list[float]] = [[] for _ in range(n_points)]
    for row in rows:
        out[row["point"]].append(row["recall"])
    return [np.asarray(r, dtype=np.float64) for r in out]
