"""``ragdiag testset``: check the corpus, options and ``--out-dir``, sample passages, print the cost
before any call, generate and filter (:mod:`ragdiag.testset.build`), write the BEIR folder, the
answers, the candidates and the manifest (stamped); with ``--human-qrels``, certify the synthetic
qrels against the human ones over the ``--retriever`` configurations
(:mod:`ragdiag.testset.human_certify`) before anything is written. ``ragdiag testset certify``: check the inputs and
``--out``, score every run under label sets A and B, compute the certificate
(:mod:`ragdiag.testset.certify`), write ``--out`` and stamp the run record."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.data.beir import corpus_file
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import describe_input, start_run
from ragdiag.io.writer import write_json
from ragdiag.llm.client import ClientConfig
from ragdiag.results.testset import CertifyResult, TestsetManifest
from ragdiag.testset.build import FILTERS, BuildOptions
from ragdiag.testset.certify import MIN_RUNS, CertifyOptions, certify, qrels_file, score_runs

if TYPE_CHECKING:
    from ragdiag.testset.human_certify import HumanSide

__all__ = ["FILTERS", "KINDS", "BuildOptions", "CertifyOptions", "CertifyRequest", "HumanQrelsRequest", "TestsetRequest",
           "certify_run", "testset_run"]


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


@dataclass
class HumanQrelsRequest:
    """``ragdiag testset --human-qrels``: the human label set, its questions, the retrieval
    configurations both question sets are ranked with, and the certificate's settings."""

    qrels: Path
    queries: Path | None = None
    retrievers: list[str] = field(default_factory=list)
    metric: str = "ndcg@10"
    top: int = 5
    bootstrap: int = 1000


@dataclass
class TestsetRequest:
    """``ragdiag testset``: the corpus, the sample, the query kinds and examples, the filters, the
    LLM client and ``--out-dir``."""

    __test__ = False
    corpus: Path
    out_dir: Path
    config: ClientConfig
    n: int = 200
    per_doc: int = 1
    min_words: int = 30
    max_words: int = 300
    lang: str = "auto"
    kinds: str = "question"
    examples: Path | None = None
    filters: str = ",".join(FILTERS)
    build: BuildOptions = field(default_factory=BuildOptions)
    sample_seed: int = 0
    progress: bool = True
    dedupe_embedder: str | None = None
    human: HumanQrelsRequest | None = None


OUT_FILES = {"corpus": "corpus.jsonl", "queries": "queries.jsonl", "qrels": "qrels/test.tsv",
             "answers": "answers.jsonl", "candidates": "candidates.jsonl", "manifest": "manifest.json"}
KINDS = ("question", "claim", "keywords")


def _check_generation(request: TestsetRequest) -> tuple[list[str], tuple[str, ...], dict[str, Path]]:
    from ragdiag.io.lists import parse_choices

    kinds = parse_choices(request.kinds, KINDS, "query kind", "--kinds")
    chosen = tuple(parse_choices(request.filters, FILTERS, "filter", "--filters")) if request.filters.strip() != "none" else ()
    if request.lang not in ("auto", "en", "fr"):
        raise RagdiagError(f"--lang must be auto, en or fr, got '{request.lang}'")
    for flag, value, low in (("--n", request.n, 1), ("--per-doc", request.per_doc, 1), ("--min-words", request.min_words, 1)):
        if value < low:
            raise RagdiagError(f"{flag} must be at least {low}, got {value}")
    if request.max_words < request.min_words:
        raise RagdiagError(f"--max-words {request.max_words} is below --min-words {request.min_words}")
    b = request.build
    if not 0 <= b.copy_max <= 1 or not 0 < b.dedupe_threshold <= 1:
        raise RagdiagError("--copy-max must be in [0, 1] and --dedupe-threshold in (0, 1]")
    if not request.corpus.exists():
        raise RagdiagError(f"--corpus {request.corpus}: no such file or folder")
    corpus = corpus_file(request.corpus)
    outputs = {name: request.out_dir / rel for name, rel in OUT_FILES.items()}
    check_paths(inputs={"--corpus": corpus, "--examples": request.examples, "--consistency-index": b.consistency_index},
                outputs={f"--out-dir {name}": path for name, path in outputs.items()}, folders={"--out-dir": request.out_dir})
    if request.examples is not None and not request.examples.is_file():
        raise RagdiagError(f"--examples {request.examples}: no such file")
    return kinds, chosen, outputs


def _announce(plan: dict[str, int], passages: int, max_calls: int | None) -> None:
    from ragdiag.io.progress import note

    cap = "" if max_calls is None else f"; --max-calls {max_calls} is a hard cap"
    label = f", at most {plan['label_at_most']} label grades" if plan["label_at_most"] else ""
    note(f"cost before any call: {plan['questions']} new LLM calls for the {passages} questions "
         f"({passages - plan['questions']} in the cache), at most {plan['answerable_at_most']} answerable "
         f"judgements{label}{cap}")


def testset_run(request: TestsetRequest) -> TestsetManifest:
    """Check, read, sample, announce the cost, generate and filter, write the BEIR folder, the answers,
    the candidates and the manifest (stamped)."""
    from dataclasses import replace

    from ragdiag.answers.run_stats import run_meta
    from ragdiag.commands.llm_files import local, open_record
    from ragdiag.data.beir import load_corpus
    from ragdiag.io.writer import write_bytes, write_jsonl, write_text
    from ragdiag.llm.client import LLMClient
    from ragdiag.llm.prompts import load_prompt, prompt_name
    from ragdiag.testset.build import build, call_plan, dense_index
    from ragdiag.testset.generate import JUDGE_PROMPT, QUESTION_PROMPT, read_examples
    from ragdiag.testset.passages import sample_passages

    kinds, chosen, outputs = _check_generation(request)
    options = replace(request.build, filters=chosen)
    corpus = corpus_file(request.corpus)
    doc_ids, doc_texts = load_corpus(corpus)
    human = _check_human(request, doc_ids, outputs)
    if options.consistency_index is not None and "consistency" in chosen:
        dense_index(options.consistency_index, options.consistency_k, doc_ids)
    if request.dedupe_embedder is not None and "dedupe" in chosen:  # loaded (and its name checked) before any call
        from ragdiag.retrieval.embedders import load_embedder

        options = replace(options, dedupe_embedder=load_embedder(request.dedupe_embedder, request.config.cache_dir,
                                                                 role="query"))
    examples = read_examples(request.examples) if request.examples is not None else []
    passages = sample_passages(doc_ids, doc_texts, request.n, request.per_doc, request.min_words, request.max_words,
                               request.sample_seed, request.lang, kinds, str(corpus))
    langs = sorted({p.lang for p in passages})
    names = [prompt_name(QUESTION_PROMPT, lang) for lang in langs]
    names += [prompt_name(JUDGE_PROMPT, lang) for lang in langs] if "answerable" in chosen else []
    names += ["utility-label", "utility-label-repair"] if options.label_pool else []
    prompts = {name: load_prompt(name).id for name in names}
    inputs: list[Path | None] = [corpus, request.examples]
    if human is not None:
        inputs += [human[0].qrels_path, human[0].queries_path]
    record = open_record("testset", request.config, inputs, prompts)
    record.seeds["sample"] = request.sample_seed
    if human is not None:
        record.seeds["certificate_bootstrap"] = request.sample_seed
    client = LLMClient(request.config)
    try:
        plan = call_plan(client, passages, examples, options)
        _announce(plan, len(passages), options.max_calls)
        built = build(client, passages, examples, doc_ids, doc_texts, options, request.config.cache_dir, request.progress)
        meta_llm = run_meta("testset", client, prompts=sorted(prompts.values())).to_json()
        stats = client.stats.to_json()
    finally:
        client.close()
    kept = built.kept()
    if not kept:
        flagged = ", ".join(f"{name} {entry['flagged']}" for name, entry in built.counts.items())
        raise RagdiagError(f"the filters kept none of the {len(built.candidates)} questions; nothing written "
                           f"(flagged: {flagged})")
    queries = [{"_id": q, "text": c.question, "metadata": {"source_doc": c.passage.doc_id, "passage_start": c.passage.start,
                                                           "passage_words": len(c.passage.text.split()),
                                                           "kind": c.passage.kind, "lang": c.passage.lang}} for q, c in kept]
    answers = [{"query_id": q, "answer": c.answer} for q, c in kept]
    rows = [{"query_id": q, "doc_id": c.passage.doc_id, "passage_start": c.passage.start, "kind": c.passage.kind,
             "lang": c.passage.lang, "question": c.question, "answer": c.answer, "problem": c.problem,
             "dropped_by": c.flags, "kept": c.kept}
            for q, c in ((f"ts{i:05d}", c) for i, c in enumerate(built.candidates))]
    unusable = [c for c in built.candidates if c.problem is not None]
    certificate, runs = (None, []) if human is None else _certify(request, human, built.qrels, queries, doc_ids, doc_texts,
                                                                   options.label_pool is not None, outputs)
    manifest = TestsetManifest(
        meta={"command": "ragdiag testset", "corpus": str(corpus), "corpus_sha256": describe_input(corpus)["sha256"],
              "model": request.config.model, "llm": meta_llm, "sample_seed": request.sample_seed, "n": request.n,
              "per_doc": request.per_doc, "min_words": request.min_words, "max_words": request.max_words,
              "lang": request.lang, "kinds": kinds, "examples": None if request.examples is None else str(request.examples),
              "filters": list(chosen), "consistency_k": options.consistency_k, "consistency_retriever": "bm25" if options.consistency_index is None else f"dense index {options.consistency_index}",
              "copy_n": options.copy_n, "copy_max": options.copy_max, "dedupe_threshold": options.dedupe_threshold,
              "dedupe_similarity": ("cosine of character 3-gram TF-IDF vectors (stand-in for embedding cosine)"
                                    if options.dedupe_embedder is None else f"embedding cosine ({request.dedupe_embedder})"),
              "label_pool": options.label_pool, "pool": options.pool if options.label_pool else None,
              "qrels": "graded 1-5 by label's judge, source document 5" if options.label_pool else "source document, 1"},
        prompts=prompts,
        counts={"sampled": len(passages), "usable_replies": len(passages) - len(unusable), "kept": len(kept),
                "qrels_pairs": sum(len(d) for d in built.qrels.values())},
        unusable={"count": len(unusable), "examples": [{"doc_id": c.passage.doc_id, "problem": c.problem,
                                                        "reply": (c.reply or "")[:300]} for c in unusable[:3]]},
        filters=built.counts,
        calls={"plan": plan, "new_by_phase": built.phases, "client": stats, "max_calls": options.max_calls},
        files={name: str(path) for name, path in outputs.items()} | ({} if human is None else {"runs": str(request.out_dir / "runs")}),
        certificate=certificate)
    local_inputs = local(inputs)
    write_bytes(outputs["corpus"], corpus.read_bytes(), inputs=local_inputs)
    write_jsonl(outputs["queries"], queries, inputs=local_inputs)
    write_text(outputs["qrels"], "query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in built.qrels.items() for d, g in docs.items()), inputs=local_inputs)
    write_jsonl(outputs["answers"], answers, inputs=local_inputs)
    write_jsonl(outputs["candidates"], rows, inputs=local_inputs)
    if human is not None and certificate is not None:
        from ragdiag.data.qrels_runs import run_file_text

        for run, path in zip(runs, human[1], strict=True):
            write_text(path, run_file_text(run), inputs=local_inputs)
        certificate.run_record = record.to_json()
        write_json(outputs["certificate"], certificate.to_json(), inputs=local_inputs)
    manifest.run_record = record.to_json()
    write_json(outputs["manifest"], manifest.to_json(), inputs=local_inputs)
    return manifest


def _check_human(request: TestsetRequest, doc_ids: list[str],
                 outputs: dict[str, Path]) -> tuple[HumanSide, list[Path]] | None:
    """With ``--human-qrels``: B, its questions and the retrievers checked, and the certificate's
    outputs (``certificate.json``, ``runs/NN-SPEC.jsonl``) added to ``outputs`` and checked; before any call."""
    from ragdiag.testset.human_certify import check_human, run_file_names

    h = request.human
    if h is None:
        return None
    _metric(h.metric)
    if h.bootstrap < 0:
        raise RagdiagError(f"--bootstrap must be at least 0, got {h.bootstrap}")
    side = check_human(h.qrels, h.queries, h.retrievers, doc_ids, h.top)
    runs = [request.out_dir / name for name in run_file_names(side.specs)]
    outputs["certificate"] = request.out_dir / "certificate.json"
    check_paths(inputs={"--human-qrels": side.qrels_path, "--human-queries": side.queries_path},
                outputs={f"--out-dir {p.relative_to(request.out_dir)}": p for p in [outputs["certificate"], *runs]})
    return side, runs


def _certify(request: TestsetRequest, human: tuple[HumanSide, list[Path]], qrels: dict[str, dict[str, int]],
             queries: list[dict[str, Any]], doc_ids: list[str], doc_texts: list[str], graded: bool,
             outputs: dict[str, Path]) -> tuple[CertifyResult, list[dict[str, list[tuple[str, float]]]]]:
    """Rank both question sets with every retriever and certify the synthetic qrels (A) against the
    human ones (B); nothing is written here."""
    from ragdiag.testset.human_certify import certify_generated, rank_both, synthetic_qrels

    h = request.human
    assert h is not None
    metric, k = _metric(h.metric)
    side = human[0]
    runs = rank_both(side, [q["_id"] for q in queries], [q["text"] for q in queries], doc_ids, doc_texts, k,
                     request.config.cache_dir, request.sample_seed, request.progress)
    options = CertifyOptions(metric=metric, k=k, top=h.top, bootstrap=h.bootstrap, seed=request.sample_seed)
    meta: dict[str, object] = {"command": "ragdiag testset --human-qrels", "a": str(outputs["qrels"]),
                               "b": str(side.qrels_path), "retrievers": [s.text for s in side.specs],
                               "run_files": [str(p) for p in human[1]]}
    result = certify_generated(side, synthetic_qrels(qrels, graded, str(outputs["qrels"])), runs, options, meta)
    return result, runs
