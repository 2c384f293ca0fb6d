"""``ragdiag probe names`` and ``ragdiag noise``: check inputs and outputs, run the probe on each
language and embedder, write --out (JSON or the tables) and --plot, stamp the run record.

Computation: :mod:`ragdiag.probes.names`, :mod:`ragdiag.probes.noise`; names on a user's own
queries: :mod:`ragdiag.commands.names_real`; rendering: :mod:`ragdiag.report.probe_report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.commands.names_real import NamesRealRequest
from ragdiag.commands.names_real import run as run_names_real
from ragdiag.errors import RagdiagError
from ragdiag.io.out_format import out_format, write_result
from ragdiag.io.paths import check_paths
from ragdiag.results.probes import NamesRealResult, ProbeRun, clean_nans

if TYPE_CHECKING:
    from ragdiag.io.run_record import RunRecord

__all__ = ["FORMATS", "NamesRealResult", "NamesRequest", "NoiseRequest", "ProbeRun", "run"]

FORMATS = ("table", "json")


@dataclass
class NamesRequest:
    """Every option of ``probe names``; ``queries``/``corpus``/``qrels`` switch to names on own queries."""

    lang: str = "en"
    embedders: tuple[str, ...] = ("local",)
    n_queries: int = 30
    runs: int = 15
    seed: int = 0
    ablations: str = "all"
    epsilon: float = 0.01
    fmt: str | None = None
    out: Path | None = None
    plot: Path | None = None
    cache_dir: Path | None = None
    cache_mode: str | None = None
    queries: Path | None = None
    corpus: Path | None = None
    qrels: Path | None = None
    k: int = 10
    names: Path | None = None
    bootstrap: int = 1000

    @property
    def on_own_queries(self) -> bool:
        return self.queries is not None or self.corpus is not None or self.qrels is not None


@dataclass
class NoiseRequest:
    """Every option of ``noise``; ``queries`` is ``bundled`` or a file path."""

    lang: str = "en"
    embedders: tuple[str, ...] = ("local",)
    levels: str = "0-4"
    queries: str = "bundled"
    seed: int = 0
    variants: int = 3
    corpus: Path | None = None
    k: int = 10
    fmt: str | None = None
    out: Path | None = None
    plot: Path | None = None
    cache_dir: Path | None = None
    cache_mode: str | None = None
    rewrite: bool = False
    model: str | None = None
    base_url: str | None = None
    qrels: Path | None = None
    bootstrap: int = 1000

    @property
    def query_file(self) -> Path | None:
        return None if self.queries == "bundled" else Path(self.queries)


def run(request: NamesRequest | NoiseRequest) -> ProbeRun | NamesRealResult:
    """The probe the request asks for (names, names on own queries, or noise)."""
    if isinstance(request, NoiseRequest):
        return _noise(request)
    check_paths(inputs={"--queries": request.queries, "--corpus": request.corpus, "--qrels": request.qrels,
                        "--names": request.names},
                outputs={"--out": request.out}, plots={"--plot": request.plot}, folders={"--cache-dir": request.cache_dir})
    if request.on_own_queries:
        return _names_on_own_queries(request)
    return _names(request)


def _check_format(fmt: str | None, out: Path | None) -> None:
    """An unknown --format, or an --out suffix asking for a format the probes do not write (CSV)."""
    if fmt is not None and fmt not in FORMATS:
        raise RagdiagError(f"unknown format '{fmt}': expected table or json")
    if out is not None:
        out_format(out, fmt, FORMATS)


def _names_on_own_queries(r: NamesRequest) -> NamesRealResult:
    from ragdiag.commands.names_real import parse_real_ablations

    queries, corpus, qrels = r.queries, r.corpus, r.qrels
    if queries is None or corpus is None or qrels is None:
        missing = [flag for flag, value in (("--queries", queries), ("--corpus", corpus), ("--qrels", qrels))
                   if value is None]
        raise RagdiagError(f"names on your own queries need --queries, --corpus and --qrels together: {missing[0]} is missing")
    if "," in r.lang or r.lang not in ("en", "fr"):
        raise RagdiagError(f"--lang '{r.lang}': with --queries give one language, en or fr (the name lists)")
    if len(r.embedders) != 1:
        raise RagdiagError("with --queries give one --embedder")
    if r.plot is not None:
        raise RagdiagError("--plot does not apply with --queries (the result is the table and its JSON)")
    if r.out is not None:
        out_format(r.out, r.fmt, FORMATS)
    return run_names_real(NamesRealRequest(queries, corpus, qrels, r.lang, r.embedders[0],
                                           parse_real_ablations(r.ablations), r.k, r.names, r.bootstrap, r.seed,
                                           r.cache_dir, r.cache_mode, out=r.out, fmt=r.fmt))


def _names(r: NamesRequest) -> ProbeRun:
    """The Δ-margin name probe for each language and embedder (docs/methods.md#6-name-probe)."""
    from ragdiag.io.run_record import start_run
    from ragdiag.probes.ablations import NEAR_MISS_DISTANCE, parse_ablations
    from ragdiag.probes.embedding import load_embedders, make_meta
    from ragdiag.probes.names import FAKER_LOCALES, run_names_probe
    from ragdiag.probes.probe_data import parse_langs

    langs, abl = parse_langs(r.lang), parse_ablations(r.ablations)
    _check_format(r.fmt, r.out)
    if r.epsilon < 0:
        raise RagdiagError(f"--epsilon must be non-negative (got {r.epsilon})")
    embs = load_embedders(list(r.embedders), r.cache_dir, cache_mode=r.cache_mode)
    record = start_run("ragdiag probe names", models={"embedders": [e.identity for e in embs]}, seeds={"seed": r.seed})
    results = run_names_probe(langs, embs, r.n_queries, r.runs, r.seed, abl, r.epsilon, progress=True)
    params = {
        "langs": langs, "queries": r.n_queries, "runs": r.runs, "seed": r.seed, "ablations": abl, "epsilon": r.epsilon,
        "near_miss_distance": NEAR_MISS_DISTANCE, "faker_locales": {lg: FAKER_LOCALES[lg] for lg in langs},
    }
    return _finish(results, make_meta("names", params, embs, {}), record, r.fmt, r.out, r.plot, [], [])


def _noise(r: NoiseRequest) -> ProbeRun:
    """The conversational-noise probe for each language and embedder (docs/methods.md#7-noise-probe).

    With ``rewrite``, queries are first rewritten through the LLM layer (prompt ``query-rewrite``).
    """
    from ragdiag.io.files import file_sha256
    from ragdiag.io.run_record import start_run
    from ragdiag.io.writer import guard_outputs
    from ragdiag.probes.embedding import load_embedders, make_meta
    from ragdiag.probes.noise import parse_levels, run_noise_probe
    from ragdiag.probes.probe_data import bundled_queries_path, load_queries, parse_langs

    check_paths(inputs={"--queries": r.query_file, "--corpus": r.corpus, "--qrels": r.qrels}, outputs={"--out": r.out},
                plots={"--plot": r.plot}, folders={"--cache-dir": r.cache_dir})
    langs, lv = parse_langs(r.lang), parse_levels(r.levels)
    _check_format(r.fmt, r.out)
    guard_outputs([r.out, r.plot], [r.query_file, r.corpus])
    if (r.model or r.base_url) and not r.rewrite:
        raise RagdiagError("--model and --base-url only apply with --rewrite")
    if r.qrels is not None and r.corpus is None:
        raise RagdiagError("--qrels needs --corpus (the collection the judged passages belong to)")
    query_sets = {lg: load_queries(r.query_file or bundled_queries_path(lg)) for lg in langs}
    files = {}
    if r.query_file is not None:
        files[r.query_file.name] = file_sha256(r.query_file)
    corpus_data = None
    if r.corpus is not None:
        from ragdiag.probes.noise_retrieval import load_corpus

        corpus_data = load_corpus(r.corpus)
        files[str(corpus_data.path)] = corpus_data.sha256
    graded = None
    if r.qrels is not None and corpus_data is not None:  # --qrels needs --corpus (checked above)
        from ragdiag.evaluate.inputs import load_graded_qrels
        from ragdiag.pipeline.corpus_inputs import check_judged_documents

        graded = load_graded_qrels(r.qrels)
        check_judged_documents(graded.grades, set(corpus_data.ids), r.qrels, corpus_data.path)
        files[str(r.qrels)] = file_sha256(r.qrels)
    embs = load_embedders(list(r.embedders), r.cache_dir, cache_mode=r.cache_mode)
    record = start_run("ragdiag noise", inputs=[r.query_file, r.corpus],
                       models={"embedders": [e.identity for e in embs], **({"rewrite": r.model} if r.rewrite else {})},
                       seeds={"seed": r.seed})
    rewrite_meta: list[dict[str, Any]] = []
    rewrite_fn = None
    if r.rewrite:
        from ragdiag.probes.noise_rewrite import Rewrites, rewrite_queries

        def rewrite_fn(texts: list[str]) -> Rewrites:
            rewrites = rewrite_queries(texts, r.model, r.base_url, r.cache_dir, True, r.cache_mode or "rw")
            rewrite_meta.append(rewrites.meta)
            return rewrites

    results = []
    for lg in langs:
        judged = None
        if graded is not None:
            from ragdiag.probes.noise_retrieval import JudgedQueries

            judged = JudgedQueries.of([q.id for q in query_sets[lg]], graded, r.bootstrap, r.seed)
        results += run_noise_probe(lg, query_sets[lg], embs, lv, r.variants, r.seed, corpus_data, r.k, rewrite_fn,
                                   True, judged)
    for res in results:
        if r.query_file is None:
            res["data_files"][bundled_queries_path(res["lang"]).name] = file_sha256(bundled_queries_path(res["lang"]))
    params = {"langs": langs, "levels": lv, "queries": r.queries, "variants": r.variants, "seed": r.seed,
              "corpus": str(r.corpus) if r.corpus else None, "k": r.k if r.corpus else None, "rewrite": r.rewrite,
              **({"qrels": str(r.qrels), "bootstrap": r.bootstrap} if r.qrels else {})}
    meta = make_meta("noise", params, embs, files)
    if r.rewrite:
        meta["rewrite"] = rewrite_meta
    llm_notes = [f"llm calls [{lg} · {rw['model']} · {rw['prompt']}]: {rw['llm_calls']['calls']} calls, "
                 f"{rw['llm_calls']['cache_hits']} cache hits, {rw['llm_calls']['failures']} failures"
                 for lg, rw in zip(langs, rewrite_meta)]
    return _finish(results, meta, record, r.fmt, r.out, r.plot, [r.query_file, r.corpus, r.qrels], llm_notes)


def _documents(results: list[dict[str, Any]], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """One JSON object per (language, embedder): the shared meta with this result's file hashes and counters."""
    keys = ("texts", "embedding_calls")
    docs = []
    for res in results:
        own_meta = {**meta, "data_files_sha256": {**meta.get("data_files_sha256", {}), **res["data_files"]}}
        own_meta.update({key: res[key] for key in keys if key in res})
        docs.append({"meta": own_meta, **{k: v for k, v in res.items() if k not in (*keys, "data_files")}})
    return docs


def _finish(results: list[dict[str, Any]], meta: dict[str, Any], record: RunRecord, fmt: str | None, out: Path | None, plot: Path | None,
            inputs: list[Path | None], notes: list[str]) -> ProbeRun:
    """Stamp every document, make the result objects, write --out and --plot; the notes for stderr:
    call counters, flagged recoveries, LLM call counters, the files written."""
    import json

    from ragdiag.io.run_record import stamp
    from ragdiag.report import probe_report

    probe = ProbeRun.from_json([clean_nans(stamp(doc, record)) for doc in _documents(results, meta)])
    if out is not None:
        write_result(out, fmt, {"table": lambda: probe_report.render_tables(probe_report.tables(probe)) + "\n",
                                "json": lambda: json.dumps(probe.to_json(), ensure_ascii=False, indent=2,
                                                           allow_nan=False) + "\n"}, inputs)
        notes.append(f"wrote {out}")
    if plot is not None:
        from ragdiag.io.writer import write_figure

        write_figure(plot, probe_report.plot(probe))
        notes.append(f"wrote {plot}")
    probe.notes = probe_report.counter_lines(probe.results) + probe_report.recovery_flags(probe.results) + notes
    return probe
