"""The ``ragdiag`` that the documentation examples' blocks call: it hands this process's arguments,
environment, working folder and standard streams (the file descriptors themselves, over a Unix
socket) to the warm server (tests/docs/warm_server.py), which runs the command in a fresh fork of an
interpreter that has already imported ragdiag and its heavy libraries. It then exits with the
command's status, or dies of the signal that ended the command, so that bash sees what it would see
from the console script. Standard library only, started with ``python -SE``: a few milliseconds.

Usage (what the shim on the examples' PATH runs): ``warm_client.py SOCKET ARG...``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _open_fds() -> list[int]:
    """Which of the standard streams 0, 1, 2 this process has open (a block may close one)."""
    found = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


def main(argv: list[str]) -> int:
    path, args = argv[0], argv[1:]
    fds = _open_fds()
    request = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ),
                          "fds": fds}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        socket.send_fds(sock, [struct.pack("!I", len(request))], fds)
        sock.sendall(request)
        replies = sock.makefile("r", encoding="ascii")
        pid = int(replies.readline())
        for number in FORWARDED:  # Ctrl-C or a kill reaches the command, as it would the console script
            signal.signal(number, lambda signum, _frame: os.kill(pid, signum))
        kind, _, value = replies.readline().partition(" ")
    if kind == "signal":
        number = int(value)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    if kind != "exit":
        print("ragdiag (docs examples' warm server): the server ended without the command's status",
              file=sys.stderr)
        return 70
    return int(value)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
