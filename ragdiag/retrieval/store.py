"""Index directories written by ``ragdiag index build`` and read by ``ragdiag retrieve``.

Layout: ``manifest.json`` (how it was made), ``index.faiss`` (dense index at the spec's first
operating point), ``doc_ids.json`` (row → corpus ``_id``), ``bm25.pkl`` (rank-bm25 index).
"""

from __future__ import annotations

import json
import pickle
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.beir import file_sha256, load_corpus
from ragdiag.retrieval.bm25 import BM25Index
from ragdiag.retrieval.embedders import load_embedder
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.indexes import build_index, index_bytes, load_index, prepare_vectors, save_index, set_search_params

MANIFEST = "manifest.json"


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


def build_index_dir(opts: BuildOptions, progress: bool = False) -> dict:
    """Embed the corpus (through the cache), build the dense and BM25 indexes, save them; the manifest."""
    start = time.perf_counter()
    spec = parse_index_spec(opts.index)
    doc_ids, texts = load_corpus(opts.corpus)
    embedder = load_embedder(opts.embedder, opts.cache_dir, opts.use_cache, base_url=opts.base_url)
    t0 = time.perf_counter()
    vectors = prepare_vectors(embedder.encode(texts, progress=progress), opts.metric, f"embeddings of {opts.corpus}")
    embed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = build_index(spec, vectors, opts.metric, seed=opts.seed)
    point = spec.operating_points()[0]
    set_search_params(index, point)
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bm25 = BM25Index(texts, opts.lang, opts.accents)
    bm25_s = time.perf_counter() - t0
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    save_index(index, out / "index.faiss")
    (out / "doc_ids.json").write_text(json.dumps(doc_ids))
    with open(out / "bm25.pkl", "wb") as handle:
        pickle.dump(bm25, handle, protocol=pickle.HIGHEST_PROTOCOL)
    manifest = {
        "meta": {
            "command": "ragdiag index build",
            "ragdiag_version": __version__,
            "corpus": str(opts.corpus),
            "corpus_sha256": file_sha256(opts.corpus),
            "embedder": opts.embedder,
            "embedder_identity": embedder.identity,
            "index_spec": spec.text,
            "params": {**spec.build, **point},
            "metric": opts.metric,
            "bm25": {"lang": opts.lang, "accents": opts.accents, "k1": 1.5, "b": 0.75},
            "seed": opts.seed,
        },
        "n_docs": len(doc_ids),
        "dim": int(vectors.shape[1]),
        "index_bytes": index_bytes(index),
        "embedding": asdict(embedder.stats),
        "timings_s": {"embed": embed_s, "index": index_s, "bm25": bm25_s, "total": time.perf_counter() - start},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


@dataclass
class IndexDir:
    """A loaded index directory."""

    path: Path
    manifest: dict
    doc_ids: list[str]

    def dense(self):
        return load_index(self.path / "index.faiss")

    def bm25(self) -> BM25Index:
        with open(self.path / "bm25.pkl", "rb") as handle:
            return pickle.load(handle)

    def embed_queries(self, texts: list[str], cache_dir: Path | None, base_url: str | None, progress: bool) -> np.ndarray:
        meta = self.manifest["meta"]
        embedder = load_embedder(meta["embedder"], cache_dir, base_url=base_url)
        return prepare_vectors(embedder.encode(texts, progress=progress), meta["metric"], "query embeddings")


def open_index_dir(path: Path) -> IndexDir:
    path = Path(path)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise RagdiagError(f"{path}: not an index directory (no {MANIFEST}; build one with 'ragdiag index build')")
    manifest = json.loads(manifest_path.read_text())
    return IndexDir(path, manifest, json.loads((path / "doc_ids.json").read_text()))
