"""FAISS indexes from spec strings: build, set search parameters, search, save and load.

Metrics: ``ip`` (inner product), ``cosine`` (inner product of L2-normalised vectors), ``l2``
(squared Euclidean). Scores returned by :func:`search` are faiss's: similarities for
ip/cosine (higher is better), squared distances for l2 (lower is better).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import IndexSpec, check_index_params

if TYPE_CHECKING:
    import faiss

METRICS = ("ip", "cosine", "l2")


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise RagdiagError(f"unknown metric '{metric}': expected one of {', '.join(METRICS)}")
    return metric


def prepare_vectors(vectors: np.ndarray, metric: str, source: str) -> np.ndarray:
    """Validated C-contiguous float32 2-D vectors, L2-normalised for cosine.

    Rejects (with the source named) empty arrays, non-2-D arrays, NaN/inf values, and zero
    vectors under cosine.
    """
    check_metric(metric)
    array = np.asarray(vectors)
    if array.ndim != 2:
        raise RagdiagError(f"{source}: expected a 2-D array (n × dim), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise RagdiagError(f"{source}: no vectors (shape {array.shape})")
    if np.iscomplexobj(array):
        raise RagdiagError(f"{source}: complex-valued vectors (dtype {array.dtype}); give real numbers (e.g. float32)")
    if not np.issubdtype(array.dtype, np.number):
        raise RagdiagError(f"{source}: vectors must be numeric, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.float32)
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        raise RagdiagError(f"{source}: row {int(np.argmax(bad))} contains NaN or infinite values ({int(bad.sum())} rows)")
    if metric == "cosine":
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if (norms == 0).any():
            raise RagdiagError(f"{source}: row {int(np.argmax(norms[:, 0] == 0))} is a zero vector (cosine undefined)")
        array = np.ascontiguousarray(array / norms)
    return array


def _faiss_metric(metric: str) -> int:
    import faiss

    return faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT


def build_index(spec: IndexSpec, vectors: np.ndarray, metric: str, seed: int = 0) -> faiss.Index:
    """A trained, filled faiss index for ``spec`` over prepared ``vectors``."""
    import faiss

    n, dim = vectors.shape
    fmetric = _faiss_metric(metric)
    index: faiss.Index
    if spec.kind == "flat":
        index = faiss.IndexFlat(dim, fmetric)
    elif spec.kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, spec.build["M"], fmetric)
        index.hnsw.efConstruction = spec.build["efConstruction"]
    elif spec.kind == "hnsw_sq8":
        # faiss's stub types the second argument as a ScalarQuantizer; C++ takes its QuantizerType
        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, spec.build["M"], fmetric)  # type: ignore[arg-type]
        index.hnsw.efConstruction = spec.build["efConstruction"]
    elif spec.kind == "ivfpq":
        return _ivfpq(spec, vectors, fmetric, seed)
    else:  # ivf
        nlist = spec.build["nlist"]
        if nlist > n:
            raise RagdiagError(f"index spec '{spec.text}': nlist={nlist} exceeds the {n} base vectors")
        quantizer = faiss.IndexFlat(dim, fmetric)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, fmetric)
        index.cp.seed = seed
        index.own_fields = True
        quantizer.this.disown()  # type: ignore[attr-defined]  # SWIG's proxy attribute, absent from faiss's stub
    if not index.is_trained:
        index.train(vectors)
    index.add(vectors)
    return index


def _ivfpq(spec: IndexSpec, vectors: np.ndarray, fmetric: int, seed: int) -> faiss.Index:
    """IVF-PQ (``IndexIVFPQ``), wrapped in ``IndexRefineFlat`` (exact re-ranking) when the spec has refine."""
    import faiss

    n, dim = vectors.shape
    check_index_params(spec, n, dim)
    quantizer = faiss.IndexFlat(dim, fmetric)
    index = faiss.IndexIVFPQ(quantizer, dim, spec.build["nlist"], spec.build["m"], spec.build["nbits"], fmetric)
    index.cp.seed = seed
    index.pq.cp.seed = seed
    index.own_fields = True
    quantizer.this.disown()  # type: ignore[attr-defined]  # SWIG's proxy attribute, absent from faiss's stub
    built: faiss.Index = index
    if "refine" in spec.search:
        built = faiss.IndexRefineFlat(index)
        built.own_fields = True
        index.this.disown()  # type: ignore[attr-defined]
    built.train(vectors)
    built.add(vectors)
    return built


def set_search_params(index, params: dict[str, int], k: int | None = None) -> None:
    """Apply one operating point's search parameters (efSearch, nprobe, refine) to a built index.

    ``refine`` = K' candidates re-ranked exactly, so the refine index's ``k_factor`` = K'/k needs the
    number of results ``k`` the searches will ask for (K' ≥ k).
    """
    import faiss

    for name, value in params.items():
        if name == "efSearch":
            cast("faiss.IndexHNSW", faiss.downcast_index(index)).hnsw.efSearch = value
        elif name == "nprobe":
            faiss.extract_index_ivf(index).nprobe = value
        elif name == "refine":
            if k is None:
                raise RagdiagError(f"refine={value} re-ranks K' candidates for k results: it needs k, which only "
                                   "robustness and sweep know; build this index without refine")
            if value < k:
                raise RagdiagError(f"refine={value} must be at least k={k} (the candidates re-ranked exactly)")
            cast("faiss.IndexRefine", faiss.downcast_index(index)).k_factor = value / k
        else:
            raise RagdiagError(f"unknown search parameter '{name}'")


def search(index, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids) of the top ``k`` for each query row; ids are -1 where fewer were found."""
    if k > index.ntotal:
        raise RagdiagError(f"k={k} is larger than the {index.ntotal} vectors in the index")
    return index.search(queries, k)


def index_bytes(index) -> int:
    """Size of ``faiss.serialize_index(index)`` in bytes (the index's memory, docs/methods.md#5-index-benchmark-methodology)."""
    import faiss

    return int(faiss.serialize_index(index).nbytes)


def save_index(index, path: Path) -> None:
    import faiss

    faiss.write_index(index, str(path))


def load_index(path: Path):
    import faiss

    if not Path(path).is_file():
        raise RagdiagError(f"{path}: index file not found")
    try:
        return faiss.read_index(str(path))
    except RuntimeError:  # garbage, a pickle, a truncated file: faiss's reader gives up (its message holds raw bytes)
        raise RagdiagError(f"{path}: not a readable faiss index (faiss could not parse the file: corrupt, truncated "
                           "or not an index); rebuild it with 'ragdiag index build'") from None
