"""Suite-wide hooks.

1. No JSON file ragdiag writes during the tests holds NaN or ±Infinity (issue 18).

Every file goes out through :func:`ragdiag.io.writer.atomic_path` (``write_json``, ``write_jsonl``,
``write_text`` and the libraries writing by file name all use it). At configure time, before any
test module imports ragdiag, the module attribute is wrapped: each finished ``.json`` / ``.jsonl``
file is parsed with a strict reader (NaN, Infinity, -Infinity refused) before it is renamed into
place. An autouse fixture then fails the test during which an offending file was written, naming
the file and the constant. Commands run in a subprocess are outside this hook.

2. The end of an xdist worker must be quick. After a worker reports ``workerfinished`` the main
process tells it to exit, and execnet gives it 5 s before it sends the worker a SIGINT
(``execnet.gateway_base.WorkerGateway._terminate_execution``). pytest's own cleanup in the worker
then runs ``gc.collect()`` (``_pytest.unraisableexception.cleanup``). A worker that has loaded
torch, datasets and faiss and run hundreds of tests holds millions of objects, and on two loaded
cores that collection can take longer than those 5 s. The SIGINT then lands in a weakref callback
during the collection, and the run, although it passes, prints "PytestUnraisableExceptionWarning:
Exception ignored in: <function WeakSet.__init__.<locals>._remove …> … KeyboardInterrupt".

So the worker collects *before* it reports (``tryfirst``: before xdist's ``pytest_sessionfinish``
wrapper sends ``workerfinished``) and then freezes the survivors (``gc.freeze``), so that the
final collection has nothing left to walk.
"""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from pathlib import Path

import pytest

_OFFENDERS: list[str] = []


def _reject(constant: str) -> float:
    raise ValueError(f"non-standard JSON constant {constant}")


def non_standard_json(path: Path, data: bytes) -> str | None:
    """Why ``data`` (the bytes of ``path``) is not strict JSON / JSON lines, or None when it is."""
    text = data.decode("utf-8", "replace")
    chunks = text.splitlines() if path.suffix == ".jsonl" else [text]
    for number, chunk in enumerate(chunks, start=1):
        if not chunk.strip():
            continue
        try:
            json.loads(chunk, parse_constant=_reject)
        except ValueError as err:
            if "non-standard JSON constant" in str(err):
                where = f" line {number}" if path.suffix == ".jsonl" else ""
                return f"{path}{where}: {err}"
    return None


def pytest_configure(config: pytest.Config) -> None:
    import ragdiag.io.writer as writer

    original = writer.atomic_path

    @contextmanager
    def checked_atomic_path(path, *args, **kwargs):
        with original(path, *args, **kwargs) as tmp:
            yield tmp
            if Path(path).suffix in (".json", ".jsonl") and Path(tmp).is_file():
                problem = non_standard_json(Path(path), Path(tmp).read_bytes())
                if problem:
                    _OFFENDERS.append(problem)

    writer.atomic_path = checked_atomic_path
    _build_once()


@pytest.fixture(autouse=True)
def no_nan_written_as_json():
    """Fail the test that wrote a JSON file holding NaN or ±Infinity (strict readers refuse those)."""
    _OFFENDERS.clear()
    yield
    found, _OFFENDERS[:] = list(_OFFENDERS), []
    assert not found, "NaN/Infinity written into JSON: " + "; ".join(found[:5])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a ``slow`` test are collected first, the rest keep their order. With ``--dist loadfile
    --no-loadscope-reorder`` (``make test``) xdist hands out whole files in this order, so the long files
    start first and the short ones fill the end (longest-first scheduling): no long file starts last on one
    worker while the other has nothing left. xdist's default order is by number of tests, which sends the
    long files with few tests (mypy's, Ray's, the docs examples') to the end.

    Tests marked ``ray`` start a local Ray instance; two starting at once on the two workers slowed each
    other (the Ray files' sum of durations 115 → 170 s). So a file of Ray tests goes first of all, and in a
    file that mixes them (the docs examples) the Ray tests go last: by then the Ray file is done."""
    files: dict[Path, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.path, []).append(item)
    slow = {path for path, tests in files.items() if any(t.get_closest_marker("slow") for t in tests)}
    all_ray = {path for path, tests in files.items() if all(t.get_closest_marker("ray") for t in tests)}
    rank = {path: index for index, path in enumerate(files)}
    items.sort(key=lambda item: (item.path not in slow, item.path not in all_ray, rank[item.path],
                                 item.get_closest_marker("ray") is not None))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker
        gc.collect()
        gc.freeze()


def _build_once() -> None:
    """typer's ``CliRunner.invoke(app, …)`` builds the whole click tree of ``app`` on every call
    (``typer.main.get_command``: ~0.2 s for ragdiag's 40-odd commands, most of a light test's time). The
    tree depends only on what is registered on the app, so it is built once per registration state."""
    import typer.main
    import typer.testing

    built: dict[tuple[int, int, int], tuple[object, object]] = {}  # the app is kept: its id stays its own
    original = typer.main.get_command

    def get_command(app):
        key = (id(app), len(app.registered_commands), len(app.registered_groups))
        if key not in built:
            built[key] = (app, original(app))
        return built[key][1]

    typer.testing._get_command = get_command
