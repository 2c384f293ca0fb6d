"""Index folders written by ``ragdiag index build`` and read by ``ragdiag retrieve``.

Layout (nothing in it can execute code when loaded — no pickle anywhere):

* ``manifest.json`` — how it was made (``meta``), counts, timings, and the ``run_record``;
* ``index.faiss`` — dense index at the spec's first operating point (absent with ``--embedder none``);
* ``doc_ids.json`` — row → corpus ``_id``;
* ``passage_docs.json`` — with ``--chunk``: dense row (passage) → document row (max-pooled at retrieval);
* ``sources.json`` — a folder of documents as the corpus: row → the file its passage was cut from
  (its id is ``relative/path#n``);
* ``passages.json`` — a folder of documents as the corpus: row → the text of the passage cut (what
  ``triage --index-dir`` shows the generator; a corpus file is read again from ``meta.corpus``);
* ``bm25/`` — the bm25s index in bm25s's own layout (``.npy`` arrays loaded with
  ``allow_pickle=False``, JSON vocabulary and parameters).

An index folder from ragdiag < 0.3 holds ``bm25.pkl``; it is refused, never unpickled.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag import __version__
from ragdiag.data.beir import corpus_file, load_corpus
from ragdiag.data.doc_folder import cut_folder, is_document_folder, read_folder
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import Reading, current_reading
from ragdiag.io.progress import note, step
from ragdiag.io.run_record import describe_input
from ragdiag.io.writer import atomic_path, check_output_dir, guard_outputs, write_json
from ragdiag.retrieval.bm25 import (
    BM25_FILES,
    Bm25Config,
    BM25Index,
    load_bm25,
    parse_bm25_spec,
    save_bm25,
)
from ragdiag.retrieval.chunking import ChunkSpec, WordTokenizer, check_fits, parse_chunk, split_documents
from ragdiag.retrieval.embedders import load_embedder, resolve_device
from ragdiag.retrieval.index_specs import check_index_params, parse_index_spec
from ragdiag.retrieval.indexes import (
    build_index,
    check_metric,
    index_bytes,
    load_index,
    prepare_vectors,
    save_index,
    set_search_params,
)

MANIFEST = "manifest.json"
DOC_IDS = "doc_ids.json"
PASSAGE_DOCS = "passage_docs.json"
SOURCES = "sources.json"
PASSAGES = "passages.json"
DENSE = "index.faiss"
BM25_DIR = "bm25"
LEGACY_PICKLE = "bm25.pkl"
NO_EMBEDDER = "none"


@dataclass
class BuildOptions:
    corpus: Path
    out: Path
    embedder: str = "local"
    index: str = "flat"
    metric: str = "cosine"
    lang: str = "en"
    accents: bool = False
    cache_dir: Path | None = None
    use_cache: bool = True
    base_url: str | None = None
    seed: int = 0
    bm25: str = "bm25:lucene"
    stem: bool = True
    chunk: str | None = None  # TOKENS[:OVERLAP]: dense passages of a document, max-pooled at retrieval
    device: str = "cpu"
    batch_size: int | None = None
    backend: str = "faiss"  # or pgvector:postgresql://… / pgvector:embedded:DIR (pg-* specs)
    cache_mode: str | None = None  # rw|replay|off|refresh for the embedding cache (None: rw, or off without use_cache)
    reading: Reading | None = None  # (None: the active one) fields and format of the corpus file; chunk size of a folder of documents

    def bm25_config(self) -> Bm25Config:
        """The BM25 spec (variant, k1, b) with the tokeniser settings (lang, stem, accents)."""
        return parse_bm25_spec(self.bm25, lang=self.lang, stem=self.stem, accents=self.accents)


def check_build_options(opts: BuildOptions):
    """Every option checked before any work (the corpus is not read yet); the index spec."""
    from ragdiag.retrieval.pgvector_store import check_build

    if not is_document_folder(opts.corpus):
        opts.corpus = corpus_file(opts.corpus)  # a BEIR folder names its corpus.jsonl
    pg = check_build(opts.backend, opts.index)
    spec = pg[1] if pg else parse_index_spec(opts.index)
    if not pg and "refine" in spec.search:
        raise RagdiagError(f"index spec '{opts.index}': refine re-ranks K' candidates for k results, and an index folder "
                           "does not know k; build it without refine (robustness and sweep take refine)")
    check_metric(opts.metric)
    opts.bm25_config()
    if opts.chunk is not None:
        parse_chunk(opts.chunk)
        if opts.embedder == NO_EMBEDDER:
            raise RagdiagError("chunking splits documents for the dense index; there is none with the embedder 'none'")
    if opts.device != "auto":
        resolve_device(opts.device)
    if opts.batch_size is not None and opts.batch_size < 1:
        raise RagdiagError(f"batch size must be ≥ 1, got {opts.batch_size}")
    check_output_dir(opts.out, "index folder")
    out = Path(opts.out)
    guard_outputs([out / MANIFEST, out / DOC_IDS, out / DENSE, out / SOURCES, out / PASSAGES, *(out / BM25_DIR / n for n in BM25_FILES)],
                  [opts.corpus] if Path(opts.corpus).is_file() else [])
    return spec


@dataclass
class BuiltIndexes:
    """What :func:`build_indexes` made, before anything is saved."""

    doc_ids: list[str]
    bm25: BM25Index
    timings: dict[str, float]
    embedder: Any = None  # None with --embedder none (no dense index)
    vectors: np.ndarray | None = None
    n_passages: int | None = None
    owners: np.ndarray | None = None  # passage -> document row, with --chunk
    truncated: int | None = None
    index: Any = None  # the faiss index (backend faiss)
    pg_block: dict | None = None  # what pgvector built (backend pgvector)
    point: dict = field(default_factory=dict)  # the first operating point's search parameters
    texts: list[str] | None = None  # a folder of documents: the passages cut from it
    sources: list[str] | None = None  # a folder of documents: each row's file
    folder: dict | None = None  # a folder of documents: how its passages were cut


def build_indexes(opts: BuildOptions, spec, progress: bool = False) -> BuiltIndexes:
    """Read the corpus, embed it through the cache and build the dense index (unless the embedder is
    ``none``), build the BM25 index; the time of each step in ``timings``."""
    embedder = None
    if opts.embedder != NO_EMBEDDER:
        embedder = load_embedder(opts.embedder, opts.cache_dir, opts.use_cache, base_url=opts.base_url,
                                 batch_size=opts.batch_size, device=opts.device, cache_mode=opts.cache_mode)
    with step(f"reading the corpus {opts.corpus}", progress):
        if is_document_folder(opts.corpus):
            built = _folder_corpus(Path(opts.corpus), current_reading(opts.reading), embedder)
            texts = built.texts or []
        else:
            doc_ids, texts = load_corpus(opts.corpus, opts.reading)
            built = BuiltIndexes(doc_ids=doc_ids, bm25=None, timings={})  # type: ignore[arg-type]
    if embedder is not None:
        passages, built.owners, built.truncated = _passages(embedder, texts, opts.chunk)
        built.embedder, built.n_passages = embedder, len(passages)
        t0 = time.perf_counter()
        built.vectors = prepare_vectors(embedder.encode(passages, progress=progress), opts.metric,
                                        f"embeddings of {opts.corpus}")
        built.timings["embed"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        built.point = spec.operating_points()[0]
        if opts.backend != "faiss":
            from ragdiag.retrieval.pgvector_store import build_dense

            built.pg_block = build_dense(opts.backend, spec, built.vectors, opts.metric, Path(opts.out))
        else:
            check_index_params(spec, n_vectors=len(passages))
            with step(f"building the faiss index {spec.text} over {len(passages):,} vectors", progress):
                built.index = build_index(spec, built.vectors, opts.metric, seed=opts.seed)
            set_search_params(built.index, built.point)
        built.timings["index"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with step(f"building the BM25 index over {len(texts):,} passages", progress):
        built.bm25 = BM25Index.build(texts, opts.bm25_config(), source=str(opts.corpus))
    built.timings["bm25"] = time.perf_counter() - t0
    return built


def save_index_folder(out: Path, built: BuiltIndexes) -> None:
    """Write the folder's index files (each atomically, through :mod:`ragdiag.io.writer`) and remove
    what an earlier build left that this one does not have."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / LEGACY_PICKLE).unlink(missing_ok=True)
    if built.index is not None:
        with atomic_path(out / DENSE) as tmp:
            save_index(built.index, tmp)
    else:
        (out / DENSE).unlink(missing_ok=True)
    write_json(out / DOC_IDS, built.doc_ids, indent=None)
    for name, rows in ((SOURCES, built.sources), (PASSAGES, built.texts if built.sources is not None else None)):
        if rows is not None:
            write_json(out / name, rows, indent=None)
        else:
            (out / name).unlink(missing_ok=True)
    if built.owners is not None:
        write_json(out / PASSAGE_DOCS, built.owners.tolist(), indent=None)
    else:
        (out / PASSAGE_DOCS).unlink(missing_ok=True)
    save_bm25(built.bm25, out / BM25_DIR)


def manifest_of(opts: BuildOptions, spec, built: BuiltIndexes) -> dict:
    """``manifest.json`` without its run record: how the folder was made, counts, calls, timings."""
    dense_wanted = opts.embedder != NO_EMBEDDER
    embedder, pg_block, index = built.embedder, built.pg_block, built.index
    return {
        "meta": {
            "command": "ragdiag index build",
            "ragdiag_version": __version__,
            "corpus": str(opts.corpus),
            "corpus_sha256": describe_input(opts.corpus)["sha256"],
            **({"documents": built.folder} if built.folder else {}),
            "embedder": opts.embedder,
            "embedder_identity": embedder.identity if embedder else None,
            "index_spec": spec.text if dense_wanted else None,
            "params": {**spec.build, **built.point} if dense_wanted else {},
            "metric": opts.metric,
            "bm25": {**built.bm25.config.to_json(), "engine": "bm25s"},
            "seed": opts.seed,
            "chunk": parse_chunk(opts.chunk).text if opts.chunk and dense_wanted else None,
            "backend": pg_block["backend"] if pg_block else "faiss",
            **({"pgvector": pg_block} if pg_block else {}),
        },
        "n_docs": len(built.doc_ids),
        "n_passages": built.n_passages if dense_wanted else None,
        "truncated_texts": built.truncated if dense_wanted else None,
        "dim": int(built.vectors.shape[1]) if built.vectors is not None else None,
        "index_bytes": index_bytes(index) if index is not None else (pg_block["index_bytes"] if pg_block else None),
        "embedding": asdict(embedder.stats) if embedder else {"texts": 0, "cache_hits": 0, "model_calls": 0, "embedded": 0, "retries": 0},
        "timings_s": built.timings,
    }


def _folder_corpus(root: Path, reading: Reading, embedder) -> BuiltIndexes:
    """A folder of documents cut into passages of ``reading.chunk_size`` tokens (``chunk_overlap``
    shared) by the embedder's tokenizer (whitespace words without one); ids ``relative/path#n``."""
    documents = read_folder(root)
    has_tokenizer = embedder is not None and hasattr(embedder, "tokenizer")
    tokenizer = embedder.tokenizer() if has_tokenizer else WordTokenizer()
    spec = ChunkSpec(reading.chunk_size, reading.chunk_overlap)
    if has_tokenizer:
        check_fits(spec, embedder.window)
    cut = cut_folder(documents, tokenizer, spec)
    built = BuiltIndexes(doc_ids=cut.ids, bm25=None, timings={})  # type: ignore[arg-type]
    built.texts = cut.texts
    built.sources = cut.sources
    built.folder = {"files": len(documents.paths), "skipped_files": len(documents.skipped),
                    "chunk_size": spec.tokens, "chunk_overlap": spec.overlap,
                    "tokens": "the embedder's tokenizer" if has_tokenizer else "whitespace-separated words"}
    return built


def _passages(embedder, texts: list[str], chunk: str | None) -> tuple[list[str], np.ndarray | None, int | None]:
    """(texts to embed, passage → document position or None, count longer than the model window).

    With ``chunk`` the documents are split with the embedder's tokenizer; otherwise each document
    is one passage and those longer than the window are counted and named in one note line."""
    if not hasattr(embedder, "count_truncated"):
        if chunk:
            raise RagdiagError("chunking needs a sentence-transformers embedder (local or st:NAME), whose tokenizer "
                               "ragdiag can read; API embedders do not expose theirs")
        return texts, None, None
    owners = None
    if chunk:
        spec = parse_chunk(chunk)
        prefix = embedder.tokenizer()(embedder.prefix, add_special_tokens=False)["input_ids"] if embedder.prefix else []
        check_fits(spec, embedder.window, prefix_tokens=len(prefix))
        texts, owners = split_documents(texts, embedder.tokenizer(), spec)
    truncated = embedder.count_truncated(texts)
    if truncated:
        note(f"{truncated:,} of {len(texts):,} {'passages' if chunk else 'documents'} are longer than the model window "
             f"of {embedder.window} tokens and are truncated to it; --chunk TOKENS[:OVERLAP] splits documents into passages")
    return texts, owners, truncated


@dataclass
class IndexDir:
    """A loaded index folder."""

    path: Path
    manifest: dict
    doc_ids: list[str]
    progress: bool = False  # a heartbeat while a large index or corpus is read (io.progress.step)
    _loaded: dict = field(default_factory=dict, init=False, repr=False)  # each index read and checked once

    @property
    def has_dense(self) -> bool:
        return self.manifest["meta"].get("embedder") != NO_EMBEDDER

    def dense(self):
        if not self.has_dense:
            raise RagdiagError(f"index folder {self.path} has no dense index (built with --embedder none); use --mode bm25")
        if "dense" in self._loaded:
            return self._loaded["dense"]
        with step(f"loading the faiss index {self.path / DENSE} ({_size(self.path / DENSE)})", self.progress):
            index = load_index(self.path / DENSE)
        owners = self.passage_docs()
        rows, listed = (len(owners), PASSAGE_DOCS) if owners is not None else (len(self.doc_ids), DOC_IDS)
        if index.ntotal != rows:
            raise RagdiagError(f"index folder {self.path}: {DENSE} holds {index.ntotal} vectors but {listed} lists {rows}; "
                               "the folder was tampered with or mixed up — rebuild it with 'ragdiag index build'")
        self._loaded["dense"] = index
        return index

    def bm25(self) -> BM25Index:
        meta = self.manifest["meta"].get("bm25") or {}
        if "variant" not in meta:
            raise RagdiagError(f"index folder {self.path} was built by an older ragdiag; rebuild it with 'ragdiag index build'")
        if "bm25" in self._loaded:
            return self._loaded["bm25"]
        with step(f"loading the BM25 index {self.path / BM25_DIR}", self.progress):
            index = load_bm25(self.path / BM25_DIR, Bm25Config.from_json(meta))
        if index.n_docs != len(self.doc_ids):
            raise RagdiagError(f"index folder {self.path}: the BM25 index holds {index.n_docs} documents but {DOC_IDS} "
                               f"lists {len(self.doc_ids)}; rebuild it with 'ragdiag index build'")
        self._loaded["bm25"] = index
        return index

    def passage_docs(self) -> np.ndarray | None:
        """Dense row → document row for a chunked index, else None."""
        if not self.manifest["meta"].get("chunk"):
            return None
        if not (self.path / PASSAGE_DOCS).is_file():
            raise RagdiagError(f"index folder {self.path} is missing {PASSAGE_DOCS}; rebuild it with 'ragdiag index build'")
        owners = np.asarray(_read_json(self.path / PASSAGE_DOCS, self.path), dtype=np.int64)
        if owners.ndim != 1 or (owners.size and (owners.min() < 0 or owners.max() >= len(self.doc_ids))):
            raise RagdiagError(f"index folder {self.path}: {PASSAGE_DOCS} does not match {DOC_IDS}; rebuild the index")
        return owners

    def embed_queries(self, texts: list[str], cache_dir: Path | None, base_url: str | None, progress: bool,
                      device: str = "cpu", batch_size: int | None = None, cache_mode: str | None = None) -> np.ndarray:
        meta = self.manifest["meta"]
        embedder = load_embedder(meta["embedder"], cache_dir, base_url=base_url, role="query", device=device,
                                 batch_size=batch_size, cache_mode=cache_mode)
        return prepare_vectors(embedder.encode(texts, progress=progress), meta["metric"], "query embeddings")


def index_passages(index: IndexDir, reading: Reading | None = None) -> tuple[list[str], Path]:
    """The text of each row of ``index`` (row order, as ``doc_ids``) and where it was read: the
    ``passages.json`` a folder of documents left, else the corpus file named in the manifest, read
    again (``reading``: the fields it was built with) and checked unchanged (its sha256) with the same ids."""
    if (index.path / PASSAGES).is_file():
        texts = _read_json(index.path / PASSAGES, index.path)
        if not isinstance(texts, list) or len(texts) != len(index.doc_ids) or not all(isinstance(t, str) for t in texts):
            raise RagdiagError(f"index folder {index.path}: {PASSAGES} does not match {DOC_IDS}; rebuild the index")
        return texts, index.path / PASSAGES
    meta = index.manifest["meta"]
    corpus = Path(str(meta.get("corpus") or ""))
    if meta.get("documents") is not None:
        raise RagdiagError(f"index folder {index.path} was cut from a folder of documents by an older ragdiag and keeps "
                           f"no {PASSAGES}; rebuild it with 'ragdiag index build --corpus {corpus}'")
    if not corpus.is_file():
        raise RagdiagError(f"index folder {index.path} was built from the corpus {corpus}, which is not there from here "
                           f"(run from the folder the index was built in, or rebuild the index)")
    with step(f"reading the corpus {corpus} ({_size(corpus)})", index.progress):
        if meta.get("corpus_sha256") and describe_input(corpus)["sha256"] != meta["corpus_sha256"]:
            raise RagdiagError(f"index folder {index.path}: its corpus {corpus} changed since the index was built (sha256 "
                               f"differs); rebuild the index with 'ragdiag index build --corpus {corpus}'")
        ids, texts = load_corpus(corpus, reading)
    if ids != index.doc_ids:
        first = next((i for i, (a, b) in enumerate(zip(ids, index.doc_ids)) if a != b), min(len(ids), len(index.doc_ids)))
        raise RagdiagError(f"index folder {index.path}: the ids read from {corpus} differ from {DOC_IDS} (row {first + 1}"
                           f"{f': {ids[first]!r} vs {index.doc_ids[first]!r}' if first < min(len(ids), len(index.doc_ids)) else ''}); "
                           "give the --fields the index was built with")
    return texts, corpus


def _read_json(path: Path, folder: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RagdiagError(f"index folder {folder}: {path.name} is not valid JSON ({err}); rebuild the index") from None
    except RecursionError:
        raise RagdiagError(f"index folder {folder}: {path.name} is JSON nested too deeply; rebuild the index") from None


def _size(path: Path) -> str:
    """A file's size for a progress line: ``1.2 GB``."""
    size = float(path.stat().st_size) if path.is_file() else 0.0
    if size < 1000:
        return f"{size:.0f} B"
    power = min(3, int(math.log10(size) // 3))
    return f"{size / 1000 ** power:.1f} {('kB', 'MB', 'GB')[power - 1]}"


def open_index_dir(path: Path, progress: bool = False) -> IndexDir:
    """Read an index folder's manifest and ids; refuse legacy pickles and name any missing file. With
    ``progress``, loading a large index or corpus later says so (silent under a second, then every 5 s)."""
    path = Path(path)
    if not path.is_dir():
        raise RagdiagError(f"{path}: not an index directory (build one with 'ragdiag index build')")
    if (path / LEGACY_PICKLE).exists():
        raise RagdiagError(
            f"index folder {path} holds {LEGACY_PICKLE}, a pickle from an older ragdiag that is never loaded "
            "(unpickling can run code); rebuild the index with 'ragdiag index build'"
        )
    if not (path / MANIFEST).is_file():
        raise RagdiagError(f"{path}: not an index directory (no {MANIFEST}; build one with 'ragdiag index build')")
    manifest = _read_json(path / MANIFEST, path)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("meta"), dict):
        raise RagdiagError(f"index folder {path}: {MANIFEST} has no 'meta' object; rebuild the index")
    faiss_dense = manifest["meta"].get("embedder") != NO_EMBEDDER and manifest["meta"].get("backend", "faiss") == "faiss"
    needed = [DOC_IDS] + ([DENSE] if faiss_dense else [])
    for name in needed:
        if not (path / name).is_file():
            raise RagdiagError(f"index folder {path} is missing {name}; rebuild it with 'ragdiag index build'")
    with step(f"reading the ids {path / DOC_IDS} ({_size(path / DOC_IDS)})", progress):
        doc_ids = _read_json(path / DOC_IDS, path)
    if not isinstance(doc_ids, list):
        raise RagdiagError(f"index folder {path}: {DOC_IDS} is not a list of ids; rebuild the index")
    return IndexDir(path, manifest, [str(d) for d in doc_ids], progress)
