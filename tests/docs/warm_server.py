"""A warm ``ragdiag`` for the documentation examples: one interpreter imports ragdiag and the heavy
libraries its commands load (scipy, pandas, faiss, openai, matplotlib …; see ``PRELOAD``) once, then
forks a fresh copy of itself for every ``ragdiag`` a block runs.

Cold, each of the ~90 ``ragdiag`` calls of the examples spent seconds importing the same libraries
before doing anything. Here the shim on the blocks' PATH (written by :func:`warm_ragdiag`, running
tests/docs/warm_client.py) passes its arguments, environment, working folder and the file
descriptors of its standard streams over a Unix socket; the server forks a waiter, the waiter forks
the command's process, which takes over those descriptors, folder and environment and runs the
console script's ``main()`` through :func:`run_and_exit`: the exit status and the end of the
interpreter as the console script has them (threads joined, atexit handlers run, streams flushed,
an uncaught exception printed with exit 1). The waiter sends the command's pid (the client forwards
signals to it) and then its exit status, or the signal that ended it, which the client reproduces.
So a block still runs under bash as a user's would: pipes, redirections, ``cd``, ``export``, ``||``
and exit codes behave the same.

What a fork shares and a cold start does not: the modules imported here (their import-time state,
warnings already shown once), the hash seed, and the inherited numpy global random state (reseeded
in the child, like ``random``, which reseeds itself after a fork). Only standard streams 0–2 are
passed on. ``RAGDIAG_EXAMPLES_COLD=1`` runs the examples with the console script instead
(tests/docs/test_examples.py).

The server imports nothing that starts a thread (checked: fork copies only the calling thread) and
runs no torch operation before forking (an OpenMP pool does not survive a fork). It exits when the
process that started it is gone.

Run as ``python -m tests.docs.warm_server SOCKET CONSOLE_SCRIPT`` with the examples' environment.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import pkgutil
import selectors
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

# what the examples' commands import (python -X importtime on index build, retrieve, compare …); not torch,
# sentence-transformers or transformers (5 s of CPU per server): the examples' vectors come from
# tests/docs/example-vectors (tests/docs/example_vectors.py), so no example loads the model (the Ray guide's
# embedding runs in its Ray workers)
PRELOAD = ("faiss", "bm25s", "tokenizers", "scipy.stats", "scipy.special", "statsmodels.stats.multitest", "pandas",
           "pyarrow.parquet", "datasets", "openai", "httpx", "matplotlib.pyplot", "matplotlib.figure", "numpy")
READY = "warm ragdiag: ready"
START_TIMEOUT = 600  # seconds for the imports on a loaded 2-core machine
SHIM = """#!{python} -SEB
import sys
sys.path.insert(0, {client_dir!r})
import warm_client
sys.exit(warm_client.main([{socket!r}, *sys.argv[1:]]))
"""


@contextlib.contextmanager
def warm_ragdiag(root: Path, env: dict[str, str], log: Path | None = None) -> Iterator[Path]:
    """Start the server (imports from ``root``, a clone, with ``env``) and yield a folder holding a
    ``ragdiag`` shim that runs commands through it; the server is stopped on exit. Its log (the
    preload's time, then each command's wall and CPU time) is appended to ``log`` when given."""
    folder = Path(tempfile.mkdtemp(prefix="ragdiag-warm-"))  # short: a socket path has ~100 bytes
    socket_path = folder / "server.sock"
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ragdiag"
    shim.write_text(SHIM.format(python=sys.executable, client_dir=str(root / "tests" / "docs"),
                                socket=str(socket_path)))
    shim.chmod(0o755)
    log = log or folder / "server.log"
    with open(log, "ab") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.docs.warm_server", str(socket_path),
             str(Path(sys.executable).parent / "ragdiag")],
            cwd=root, env={**env, "PYTHONPATH": str(root)}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=errors)
    try:
        _wait_ready(server, log)
        yield bin_dir
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_ready(server: subprocess.Popen, log: Path) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(server.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=START_TIMEOUT):
            raise RuntimeError(f"warm server: not ready after {START_TIMEOUT} s; its log: {log.read_text()[-4000:]}")
    line = server.stdout.readline().decode().strip()
    if line != READY:
        raise RuntimeError(f"warm server: did not start ({line!r}); its log: {log.read_text()[-4000:]}")


@dataclass
class Command:
    """One ``ragdiag`` call as the client made it."""

    args: list[str]
    cwd: str
    env: dict[str, str]
    fds: list[int]  # the client's standard streams (0, 1, 2) that were open
    received: list[int]  # their copies in this process


def preload() -> None:
    """Import ragdiag (every module) and the heavy libraries; a library not installed is left out."""
    started = time.monotonic()
    import matplotlib

    matplotlib.use("Agg")  # what ragdiag's plotting modules select before pyplot
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    import ragdiag

    for module in pkgutil.walk_packages(ragdiag.__path__, "ragdiag."):
        importlib.import_module(module.name)
    print(f"preloaded in {time.monotonic() - started:.1f} s ({time.process_time():.1f} s CPU)", file=sys.stderr,
          flush=True)
    if threading.active_count() != 1:
        raise RuntimeError(f"warm server: a preloaded module started a thread ({threading.enumerate()}): "
                           "a fork would not copy it")
    gc.collect()
    gc.freeze()  # the children's collections skip the preloaded objects (and do not copy their pages)


def _receive(conn: socket.socket) -> Command:
    header, received, _flags, _addr = socket.recv_fds(conn, 4, 3)
    (length,) = struct.unpack("!I", header)
    data = b""
    while len(data) < length:
        chunk = conn.recv(length - len(data))
        if not chunk:
            raise ConnectionError("the client went away before sending its command")
        data += chunk
    request = json.loads(data)
    return Command(request["args"], request["cwd"], request["env"], request["fds"], received)


def _status(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"signal {os.WTERMSIG(wait_status)}\n"
    return f"exit {os.waitstatus_to_exitcode(wait_status)}\n"


def _wait_for(conn: socket.socket) -> Command:
    """In the waiter: receive the command, fork its process and return there; the waiter itself reports
    the pid and the exit status to the client and ends (never returns)."""
    command = _receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        return command
    for fd in command.received:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    started = time.monotonic()
    _, wait_status, usage = os.wait4(pid, 0)
    conn.sendall(_status(wait_status).encode())
    print(f"{time.monotonic() - started:.2f} s wall, {usage.ru_utime + usage.ru_stime:.2f} s CPU: ragdiag "
          f"{shlex.join(command.args)} (in {command.cwd})", file=sys.stderr, flush=True)
    os._exit(0)


class _Stop(Exception):
    """SIGTERM in the server: stop accepting, wait for the commands under way, exit."""


def _stop(_signum: int, _frame: object) -> None:
    raise _Stop


def _reap(block: bool) -> None:
    """Collect ended waiters (their CPU time then counts in the server's, and in the test's)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(path: str) -> Command:
    """Accept clients until SIGTERM or the parent process is gone; returns only in a command's process."""
    parent = os.getppid()
    signal.signal(signal.SIGTERM, _stop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    print(READY, flush=True)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            _reap(block=False)
            if os.getppid() != parent:
                raise SystemExit(0) from None
            continue
        except _Stop:
            listener.close()
            _reap(block=True)
            raise SystemExit(0) from None
        conn.setblocking(True)
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                listener.close()
                return _wait_for(conn)
            except BaseException:
                traceback.print_exc()
                os._exit(70)
        conn.close()
        _reap(block=False)


def become(command: Command, console_script: str, server_paths: set[str]) -> None:
    """In the command's process: its standard streams, folder, environment, arguments (``sys.argv[0]``:
    the console script, as when it is found on PATH), ``sys.path`` (the console script's folder and the client's PYTHONPATH in place of the server's) and ``__main__``."""
    for target in (0, 1, 2):
        if target in command.fds:
            os.dup2(command.received[command.fds.index(target)], target)
        else:
            os.close(target)
    for fd in command.received:
        os.close(fd)
    os.chdir(command.cwd)
    os.environ.clear()
    os.environ.update(command.env)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()  # a cold process draws a fresh global state
    sys.stdout.reconfigure(line_buffering=os.isatty(1))  # as at start-up: line-buffered on a terminal
    sys.argv = [console_script, *command.args]
    given = [p for p in command.env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [str(Path(console_script).parent), *given, *(p for p in sys.path if p not in server_paths)]
    main = types.ModuleType("__main__")
    main.__file__ = console_script
    sys.modules["__main__"] = main


def _system_exit_code(exit: SystemExit) -> int:
    """The status the interpreter gives ``sys.exit(code)``: None → 0, an int as is, else the text on
    stderr and 1."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def run_and_exit(main: Callable[[], object]) -> NoReturn:
    """``sys.exit(main())`` and the interpreter's shutdown as the console script has it — the exit status
    (an uncaught exception printed, 1; KeyboardInterrupt: death by SIGINT), non-daemon threads joined,
    atexit handlers (``weakref.finalize`` included) run, standard streams flushed (a broken pipe: 120) —
    without tearing down the preloaded modules one by one (10 s of copy-on-write per command on a loaded
    machine). Objects still alive at the end are not finalized: a file left open and unflushed would lose
    its buffer (ragdiag writes every file through its atomic writer, which closes it)."""
    interrupted = False
    try:
        code = _system_exit_code(SystemExit(main()))
    except SystemExit as exit:
        code = _system_exit_code(exit)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code, interrupted = 1, True
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    socket_path, script = sys.argv[1], sys.argv[2]
    server_paths = {sys.path[0], *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)}
    preload()
    command = serve(socket_path)
    become(command, script, server_paths)
    from ragdiag.cli import main as ragdiag_main

    run_and_exit(ragdiag_main)
