"""Index folders whose dense vectors live in PostgreSQL: ``index build`` / ``retrieve --backend pgvector:…``.

The folder keeps ``manifest.json`` (with a ``pgvector`` block: backend with the password
redacted, table, spec, session settings, sizes and timings from PostgreSQL), ``doc_ids.json``
and BM25; the vectors and the HNSW / IVFFlat index are the table ``ragdiag_<folder>_<hash>``.
A URL's password is never stored, so ``retrieve`` needs ``--backend`` again for a URL backend;
``pgvector:embedded:DIR`` is restarted from DIR on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.pgvector_index import PgIndex, connection_errors, table_name
from ragdiag.retrieval.pgvector_server import (
    Backend,
    connect,
    parse_backend,
    preflight,
    server_info,
    server_url,
    tune_embedded,
)
from ragdiag.retrieval.pgvector_specs import PgSpec, is_pg_spec, parse_pg_spec


def check_build(backend_text: str | None, spec_text: str) -> tuple[Backend, PgSpec] | None:
    """(backend, spec) for a pgvector build, None for faiss; checked before any work."""
    backend = parse_backend(backend_text)
    if not backend.is_pgvector:
        if is_pg_spec(spec_text):
            raise RagdiagError(f"index spec '{spec_text}' needs a pgvector backend: add --backend pgvector:embedded:DIR "
                               "or --backend pgvector:postgresql://…")
        return None
    if not is_pg_spec(spec_text):
        raise RagdiagError(f"backend {backend.describe()} builds pg-hnsw, pg-ivfflat or pg-exact specs, not '{spec_text}'")
    if backend.kind == "embedded" and backend.data_dir is None:
        raise RagdiagError("index build needs a server that outlives the command: use --backend pgvector:embedded:DIR "
                           "(a folder kept for the data) or a postgresql:// URL")
    spec = parse_pg_spec(spec_text)
    preflight(backend)
    return backend, spec


def folder_table(out: Path) -> str:
    """Table of an index folder: its name plus 8 hex digits of its absolute path (two folders never share one)."""
    path = str(Path(out).resolve())
    return table_name(f"{Path(path).name}_{hashlib.sha256(path.encode()).hexdigest()[:8]}")


def build_dense(backend_text: str, spec: PgSpec, vectors: np.ndarray, metric: str, out: Path) -> dict:
    """Load ``vectors`` into the folder's table and index them; the manifest's ``pgvector`` block."""
    backend = parse_backend(backend_text)
    point = spec.operating_points()[0]
    with server_url(backend) as (url, shown):
        conn = connect(url, shown)
        try:
            tune_embedded(conn, backend)
            index = PgIndex(conn, shown, folder_table(out), metric, spec, *vectors.shape)
            index.create(vectors, replace=True)
            sizes = index.sizes()
            info = server_info(conn)
        finally:
            conn.close()
    return {"backend": backend.describe(), "table": index.table, "rows": int(vectors.shape[0]), "spec": spec.text,
            "params": {**spec.build, **point},
            "settings": spec.settings(point), "server": info, **sizes, **index.timings}


@contextlib.contextmanager
def open_dense(folder: Path, manifest: dict, backend_text: str | None) -> Iterator[PgIndex]:
    """The folder's table as a searchable index, at the operating point it was built with."""
    block = manifest["meta"].get("pgvector") or {}
    stored = block.get("backend", "")
    backend = parse_backend(backend_text) if backend_text and backend_text != "faiss" else None
    if backend is None:
        if not stored.startswith("pgvector:embedded:"):
            raise RagdiagError(f"index folder {folder} keeps its vectors in table {block.get('table')} at {stored}: "
                               "pass --backend pgvector:postgresql://… (passwords are never stored)")
        backend = parse_backend(stored)
    spec = parse_pg_spec(block["spec"])
    with server_url(backend) as (url, shown):
        conn = connect(url, shown)
        try:
            rows = int(block.get("rows", manifest["n_docs"]))  # passages when the corpus was chunked
            index = PgIndex(conn, shown, block["table"], manifest["meta"]["metric"], spec, rows, int(manifest["dim"]))
            with connection_errors(shown, f"opening table {index.table}"):
                if not index.exists():
                    raise RagdiagError(f"index folder {folder}: table {index.table} is not on {shown}; rebuild the index")
                found = index.existing_dim()
            if found != index.dim:
                raise RagdiagError(f"index folder {folder}: table {index.table} on {shown} does not hold "
                                   f"vector({index.dim}) rows any more; rebuild the index")
            index.set_search_params({k: v for k, v in block["params"].items() if k not in spec.build})
            yield index
        finally:
            conn.close()
