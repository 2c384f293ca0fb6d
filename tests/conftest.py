"""Suite-wide hooks.

The end of an xdist worker must be quick. After a worker reports ``workerfinished`` the main
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

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker
        gc.collect()
        gc.freeze()
