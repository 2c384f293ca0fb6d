"""A pgvector table as a vector index: binary COPY loading, HNSW / IVFFlat / no index, k-NN search.

One table per index: ``(id integer, embedding vector(dim))`` with row ids 0..n-1. Operators
per metric (pgvector README): cosine ``vector_cosine_ops`` / ``<=>`` (distance 1 − cos),
inner product ``vector_ip_ops`` / ``<#>`` (−⟨x, q⟩), L2 ``vector_l2_ops`` / ``<->`` (‖x − q‖).
Scores are converted to faiss's convention so points compare: cos, ⟨x, q⟩, ‖x − q‖².

:meth:`PgIndex.search` and :attr:`PgIndex.ntotal` follow the faiss index interface, so
:mod:`ragdiag.bench.timing` measures QPS and latency over the real connection unchanged.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.retrieval.pgvector_specs import INDEX_METHOD, PgSpec

OPS = {"cosine": ("vector_cosine_ops", "<=>"), "ip": ("vector_ip_ops", "<#>"), "l2": ("vector_l2_ops", "<->")}
COPY_BATCH = 5000
MARKER = "created by ragdiag"
MAX_NAME = 63  # PostgreSQL identifiers are truncated at 63 bytes


def table_name(label: str) -> str:
    """A safe table name ``ragdiag_<label>`` (lower-case letters, digits and _; ≤ 63 bytes)."""
    slug = re.sub(r"[^a-z0-9_]+", "_", label.lower()).strip("_") or "index"
    return f"ragdiag_{slug}"[: MAX_NAME - 6]


def _to_faiss_scores(distances: np.ndarray, metric: str) -> np.ndarray:
    if metric == "cosine":
        return 1.0 - distances
    if metric == "ip":
        return -distances
    return distances * distances


@contextlib.contextmanager
def connection_errors(shown: str, during: str) -> Iterator[None]:
    """Turn a lost connection or server error into one line naming the (redacted) server."""
    psycopg = require("psycopg")
    try:
        yield
    except psycopg.OperationalError as err:
        line = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise RagdiagError(f"pgvector: connection to {shown} lost during {during} ({line})") from None
    except psycopg.Error as err:
        line = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise RagdiagError(f"pgvector: {during} failed on {shown} ({line})") from None


class PgIndex:
    """One pgvector table (and its index) on an open connection."""

    def __init__(self, conn, shown: str, table: str, metric: str, spec: PgSpec, n: int, dim: int):
        if metric not in OPS:
            raise RagdiagError(f"unknown metric '{metric}': expected one of {', '.join(OPS)}")
        self.conn, self.shown, self.table, self.metric, self.spec = conn, shown, table, metric, spec
        self.ntotal, self.dim = n, dim
        self.timings: dict[str, float] = {}
        self._query = self._sql(
            "SELECT id, embedding {op} %(q)s AS distance FROM {table} ORDER BY distance LIMIT %(k)s"
        )

    def _sql(self, template: str):
        from psycopg import sql

        return sql.SQL(template).format(table=sql.Identifier(self.table), op=sql.SQL(OPS[self.metric][1]),
                                        index=sql.Identifier(f"{self.table}_{INDEX_METHOD.get(self.spec.kind, 'none')}"))

    # ---- building -------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether a relation of this table's name exists on the server."""
        qualified = self._sql("{table}").as_string(self.conn)
        return bool(self.conn.execute("SELECT to_regclass(%s) IS NOT NULL", (qualified,)).fetchone()[0])

    def existing_dim(self) -> int:
        """Dimension of the existing table's ``embedding`` column (-1 when it is not a vector column)."""
        row = self.conn.execute(
            "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = to_regclass(%s) AND a.attname = 'embedding' AND NOT a.attisdropped",
            (self._sql("{table}").as_string(self.conn),),
        ).fetchone()
        if row is None:
            return -1
        match = re.fullmatch(r"vector\((\d+)\)", row[0])
        return int(match.group(1)) if match else -1

    def create(self, vectors: np.ndarray, replace: bool = False) -> None:
        """Create the table, COPY the vectors in (binary, batched), build the index; times kept."""
        with connection_errors(self.shown, f"building table {self.table}"):
            if self.exists():
                found = self.existing_dim()
                if found != self.dim:
                    kind = f"vector({found})" if found > 0 else "no vector column 'embedding'"
                    raise RagdiagError(f"pgvector: table {self.table} at {self.shown} has {kind} but the vectors have "
                                       f"dim {self.dim}: drop it or build under another name")
                comment = self.conn.execute("SELECT obj_description(to_regclass(%s), 'pg_class')",
                                            (self._sql("{table}").as_string(self.conn),)).fetchone()[0]
                if not replace or MARKER not in (comment or ""):
                    raise RagdiagError(f"pgvector: table {self.table} already exists at {self.shown} and was not made "
                                       "by this build: drop it or build under another name")
                self.conn.execute(self._sql("DROP TABLE {table}"))
            self.conn.execute(self._sql(f"CREATE TABLE {{table}} (id integer NOT NULL, embedding vector({int(self.dim)}) NOT NULL)"))
            self.conn.execute(self._sql(f"COMMENT ON TABLE {{table}} IS '{MARKER} ({self.spec.kind}, {self.metric})'"))
            start = time.perf_counter()
            self.copy_in(vectors)
            self.timings["load_s"] = time.perf_counter() - start
            start = time.perf_counter()
            self._create_index()
            self.timings["index_s"] = time.perf_counter() - start
            self.conn.execute(self._sql("ANALYZE {table}"))

    def copy_in(self, vectors: np.ndarray) -> None:
        """``COPY … FROM STDIN (FORMAT BINARY)`` in batches of :data:`COPY_BATCH` rows."""
        for start in range(0, len(vectors), COPY_BATCH):
            with self.conn.cursor() as cur:  # noqa: SIM117 (the inner context needs the outer one's object)
                with cur.copy(self._sql("COPY {table} (id, embedding) FROM STDIN WITH (FORMAT BINARY)")) as copy:
                    copy.set_types(["int4", "vector"])
                    for i in range(start, min(start + COPY_BATCH, len(vectors))):
                        copy.write_row((i, vectors[i]))

    def _create_index(self) -> None:
        method = INDEX_METHOD.get(self.spec.kind)
        if method is None:
            return
        options = ", ".join(f"{name} = {int(value)}" for name, value in self.spec.build.items())
        opclass = OPS[self.metric][0]
        self.conn.execute(self._sql(f"CREATE INDEX {{index}} ON {{table}} USING {method} (embedding {opclass}) WITH ({options})"))

    def sizes(self) -> dict[str, int]:
        """``pg_relation_size`` of the index and ``pg_table_size`` of the table (bytes, from PostgreSQL)."""
        with connection_errors(self.shown, "size query"):
            table = self._sql("{table}").as_string(self.conn)
            index = self._sql("{index}").as_string(self.conn) if self.spec.kind in INDEX_METHOD else None
            row = self.conn.execute("SELECT pg_table_size(to_regclass(%s)), "
                                    "CASE WHEN %s::text IS NULL THEN 0 ELSE pg_relation_size(to_regclass(%s)) END",
                                    (table, index, index)).fetchone()
        return {"table_bytes": int(row[0]), "index_bytes": int(row[1])}

    def drop(self) -> None:
        with connection_errors(self.shown, f"dropping {self.table}"):
            self.conn.execute(self._sql("DROP TABLE IF EXISTS {table}"))

    # ---- searching ------------------------------------------------------------------------
    def set_search_params(self, params: dict) -> None:
        """``set_config`` each session setting of one operating point (``hnsw.ef_search`` …)."""
        with connection_errors(self.shown, "setting search parameters"):
            for name, value in self.spec.settings(params).items():
                self.conn.execute("SELECT set_config(%s, %s, false)", (name, value))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) like faiss: one row per query, ids -1 (score NaN) where fewer than k came back.

        One query runs as one statement; several run pipelined (psycopg pipeline mode).
        """
        scores = np.full((len(queries), k), np.nan, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        with connection_errors(self.shown, "search"), self.conn.cursor() as cur:
            if len(queries) == 1:
                cur.execute(self._query, {"q": queries[0], "k": k})
                results = [cur.fetchall()]
            else:
                cur.executemany(self._query, [{"q": q, "k": k} for q in queries], returning=True)
                results = []
                while True:
                    results.append(cur.fetchall())
                    if not cur.nextset():
                        break
        for i, rows in enumerate(results):
            rows = sorted(rows, key=lambda r: (r[1], r[0]))  # relaxed_order scans may return out of order
            if rows:
                ids[i, : len(rows)] = [r[0] for r in rows]
                scores[i, : len(rows)] = _to_faiss_scores(np.array([r[1] for r in rows], dtype=np.float64), self.metric)
        return scores, ids
