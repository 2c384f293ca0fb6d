"""``ragdiag testset certify``: check the inputs and ``--out``, score every run under label sets A
and B, compute the certificate (:mod:`ragdiag.testset.certify`), write ``--out`` and stamp the run
record."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import write_json
from ragdiag.results.testset import CertifyResult
from ragdiag.testset.certify import MIN_RUNS, CertifyOptions, certify, qrels_file, score_runs

__all__ = ["CertifyOptions", "CertifyRequest", "certify_run"]


@dataclass
class CertifyRequest:
    a: Path
    b: Path
    runs: list[Path]
    metric: str = "ndcg@10"
    options: CertifyOptions = field(default_factory=CertifyOptions)
    bm25_run: Path | None = None
    dense_run: Path | None = None
    out: Path | None = None


def _metric(text: str) -> tuple[str, int]:
    from ragdiag.measures.registry import parse_metrics_at

    parsed = parse_metrics_at(text)
    if len(parsed) != 1:
        raise RagdiagError(f"--metric {text!r}: give one METRIC@K (e.g. ndcg@10)")
    return parsed[0]


def _check(request: CertifyRequest) -> tuple[Path, Path, list[str]]:
    if len(request.runs) < MIN_RUNS:
        raise RagdiagError(f"--runs: {len(request.runs)} run(s); a certificate needs at least {MIN_RUNS} "
                           "(retrieval configurations scored under both label sets)")
    names = [str(path) for path in request.runs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise RagdiagError(f"--runs: {doubled[0]} is given twice; give each run once")
    if not 2 <= request.options.top <= len(names):
        raise RagdiagError(f"--top {request.options.top}: must be between 2 and the number of runs ({len(names)})")
    for flag, path in (("--bm25-run", request.bm25_run), ("--dense-run", request.dense_run)):
        if path is not None and str(path) not in names:
            raise RagdiagError(f"{flag} {path}: not one of --runs; name one of the runs given")
    if (request.bm25_run is None) != (request.dense_run is None):
        raise RagdiagError("give --bm25-run and --dense-run together (the gap is BM25 minus dense)")
    for path in request.runs:
        if not path.is_file():
            raise RagdiagError(f"--runs {path}: no such file")
    a, b = qrels_file(request.a, "--a"), qrels_file(request.b, "--b")
    inputs = {"--a": a, "--b": b, **{f"--runs {p}": p for p in request.runs}}
    check_paths(inputs=inputs, outputs={"--out": request.out})
    return a, b, names


def certify_run(request: CertifyRequest) -> CertifyResult:
    """Check, read, compute, write ``--out``; the result carries its run record."""
    from dataclasses import replace

    metric, k = _metric(request.metric)
    a_path, b_path, names = _check(request)
    options = replace(request.options, metric=metric, k=k,
                      bm25_run=None if request.bm25_run is None else str(request.bm25_run),
                      dense_run=None if request.dense_run is None else str(request.dense_run))
    record = start_run("ragdiag testset certify", inputs=[a_path, b_path, *request.runs], seeds={"bootstrap": options.seed})
    a = score_runs(a_path, request.runs, options, "--a")
    b = score_runs(b_path, request.runs, options, "--b")
    result = certify(names, a, b, options, {"command": "ragdiag testset certify", "a": str(a_path), "b": str(b_path)})
    result.run_record = record.to_json()
    if request.out is not None:
        write_json(request.out, result.to_json(), inputs=[a_path, b_path, *request.runs])
    return result
