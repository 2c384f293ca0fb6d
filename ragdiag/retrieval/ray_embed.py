"""``--engine ray`` for embedding: the batches the cache lacks run on a Ray Data actor pool.

``--ray-workers`` actors (at most one per batch) hold one embedder each (a copy without cache, loaded
once per actor, ``--gpus-per-worker`` GPUs each); the dataset has one block per batch, in the local engine's batch
order (longest texts first) and the embedder's own batch size, so each actor computes exactly the
batches the local engine would. Workers return vectors; the driver normalises them, writes the cache
as each batch arrives (a rerun after a failure embeds only what is missing) and builds the index.
Actor restarts and task retries are Ray's (``max_restarts``, ``max_task_retries``).
Source: Ray Data ``Dataset.map_batches`` with a callable class and ``concurrency``
(https://docs.ray.io/en/latest/data/transforming-data.html).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ragdiag.engine.settings import active, ray_session
from ragdiag.errors import RagdiagError

MAX_RESTARTS = 3  # a worker process that dies is started again this many times
MAX_TASK_RETRIES = 3  # and the batch it held is retried this many times


class EmbedActor:
    """A Ray Data UDF: the embedder loads in the actor once; each call embeds one batch of texts."""

    payload: Any = None  # the embedder, bound by :func:`bound` (shipped with the class, not as an argument)

    def __init__(self) -> None:
        self.embedder = self.payload

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = np.asarray(self.embedder._embed_batch([str(t) for t in batch["text"]]), dtype=np.float32)
        return {"batch": batch["batch"], "pos": batch["pos"], "vector": vectors}


def bound(actor: type, payload: Any) -> type:
    """``actor`` with ``payload`` as a class attribute: Ray ships the class itself to each actor it
    starts or restarts, so a restarted actor rebuilds from the class alone, with no constructor argument
    of ours in the object store."""
    return type(actor.__name__, (actor,), {"payload": payload, "__module__": actor.__module__})


def quiet_ray_data() -> Any:
    """Ray Data's context with its own progress bars and logs off (ragdiag's progress speaks)."""
    import logging

    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    for name in ("ray.data", "ray.data._internal.execution.streaming_executor"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return ctx


def dataset_of(blocks: list[Any]) -> Any:
    """A Ray dataset of exactly these blocks (``ray.data.from_blocks``: one block per batch, their
    metadata read here). ``ray.data.from_arrow`` computes the same metadata in one Ray task per block,
    a worker round trip each before the first batch can start."""
    import ray.data

    return ray.data.from_blocks(blocks)


def quiet_batches(dataset: Any) -> Any:
    """The dataset's output blocks as numpy batches, without Ray Data's warnings (an actor pool larger
    than the number of blocks, for a small run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield from dataset.iter_batches(batch_size=None, batch_format="numpy")


def pool_size(workers: int, blocks: int) -> int:
    """Actors to start: ``--ray-workers``, but never more than there are batches (an actor without a
    batch would only cost a worker process's start-up, and a model load where the embedder loads eagerly)."""
    return max(1, min(workers, blocks))


def remote_args(workers: int, gpus: float) -> dict[str, Any]:
    """The actor pool's size, resources and fault tolerance for ``map_batches``."""
    args: dict[str, Any] = {"concurrency": workers, "max_restarts": MAX_RESTARTS, "max_task_retries": MAX_TASK_RETRIES}
    if gpus > 0:
        args["num_gpus"] = gpus
    return args


def embed_batches_on_ray(embedder: Any, texts: list[list[str]], rows: list[list[int]],
                         store: Callable[[list[int], np.ndarray], None], actor: type = EmbedActor) -> None:
    """Embed ``texts`` (one list per batch) on the active Ray session; ``store(rows[b][positions], vectors)``
    is called on the driver as results arrive. A failure that Ray's retries do not absorb is one line
    saying how much was stored."""
    import pyarrow as pa

    settings = active()
    session = ray_session()
    session.check_packages(["ragdiag", "numpy", *embedder.requires])
    quiet_ray_data()
    blocks = [pa.table({"batch": [b] * len(batch), "pos": list(range(len(batch))), "text": batch})
              for b, batch in enumerate(texts) if batch]
    total, done = sum(len(batch) for batch in texts), 0
    key_env = getattr(embedder, "key_env", None)  # an API embedder's key, for the workers' environment
    env = {key_env: os.environ[key_env]} if key_env and os.environ.get(key_env) else {}
    with warnings.catch_warnings():  # max_restarts / max_task_retries still go through ray_remote_args
        warnings.simplefilter("ignore")
        dataset = dataset_of(blocks).map_batches(
            bound(actor, embedder.for_worker()), batch_size=embedder.batch_size, batch_format="numpy",
            runtime_env={"env_vars": env} if env else None,
            **remote_args(pool_size(settings.ray_workers, len(blocks)), settings.gpus_per_worker))
    try:
        for out in quiet_batches(dataset):
            by_batch: dict[int, list[int]] = {}
            for i, b in enumerate(out["batch"].tolist()):
                by_batch.setdefault(b, []).append(i)
            vectors = np.asarray(out["vector"], dtype=np.float32)
            positions = out["pos"].tolist()
            for b, picked in by_batch.items():
                store([rows[b][positions[i]] for i in picked], vectors[picked])
                done += len(picked)
    except RagdiagError:
        raise
    except Exception as err:  # RayTaskError, ActorDiedError, ...: Ray's retries are spent
        raise RagdiagError(f"Ray embedding with {embedder.identity} stopped: {ray_cause(err)}; {done} of {total} "
                           "vectors were embedded and cached: rerun to embed the rest") from None


def ray_cause(err: BaseException) -> str:
    """The first line of the worker's own error inside a Ray exception."""
    cause = getattr(err, "cause", None)
    if isinstance(cause, BaseException) and cause is not err:
        return ray_cause(cause)
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    text = lines[-1] if lines and type(err).__module__.startswith("ray") else (lines[0] if lines else "")
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
