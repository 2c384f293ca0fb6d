"""Issue 33: ``--engine ray`` on a REAL local Ray instance (2 CPUs, one per module) computes what the
local engine computes, through the same caches, and fails in one line without losing finished work.
LLM calls go to the local chat test server on 127.0.0.1 (its replies are never an LLM's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.engine.settings import EngineSettings
from ragdiag.errors import RagdiagError
from tests.engine.hash_embedder import HashEmbedder
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "probes" / "golden" / "corpus.jsonl"  # 40 passages, bundled with the tests
RAY = EngineSettings(engine="ray", ray_workers=2)
runner = CliRunner()


pytestmark = pytest.mark.ray  # scheduled apart from the other Ray tests (tests/conftest.py)


def _cli(*args: str):
    from ragdiag.cli import app

    return runner.invoke(app, list(args))


def _one_line(result) -> str:
    err = getattr(result, "stderr", None) or result.output
    lines = [line for line in err.splitlines() if line.strip()]
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), err
    return lines[0]


@pytest.mark.slow  # loads torch and the model in two Ray workers and here
@pytest.mark.model
def test_index_build_on_ray_equals_local(ray_cluster, tmp_path):
    """The bundled sample's embeddings: max |ray - local| <= 1e-6, the same dense index, the same search."""
    from ragdiag.retrieval.store import open_index_dir

    outs = {}
    for engine in ("ray", "local"):
        out = tmp_path / engine
        result = _cli("index", "build", "--corpus", str(SAMPLE), "--out-dir", str(out), "--cache-dir",
                      str(tmp_path / f"cache-{engine}"), "--engine", engine, "--ray-workers", "2")
        assert result.exit_code == 0, result.output
        outs[engine] = open_index_dir(out).dense()
    ray_index, local_index = outs["ray"], outs["local"]
    vectors = {e: outs[e].reconstruct_n(0, outs[e].ntotal) for e in outs}
    assert vectors["ray"].shape == (40, 384)
    assert float(np.abs(vectors["ray"] - vectors["local"]).max()) <= 1e-6
    queries = vectors["local"][:5]
    assert np.array_equal(ray_index.search(queries, 10)[1], local_index.search(queries, 10)[1])


def test_generate_and_grade_on_ray_equal_local_then_replay(ray_cluster, tmp_path, monkeypatch):
    """Same answers and grades as the local engine; a rerun with --engine local replays all (0 requests)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    with ChatServer() as server:
        def run(engine: str, cache: str, tag: str) -> tuple[list, list, int]:
            before = server.requests
            common = ["--base-url", server.base_url, "--cache-dir", str(tmp_path / cache), "--no-progress",
                      "--engine", engine, "--ray-workers", "2"]
            answers, graded = tmp_path / f"answers-{tag}.jsonl", tmp_path / f"graded-{tag}.json"
            result = _cli("generate", "--texts", str(texts), "--ranked", str(ranked), "--ks", "2", "--out", str(answers),
                          *common)
            assert result.exit_code == 0, result.output
            result = _cli("grade", "--answers", str(answers), "--out", str(graded), *common)
            assert result.exit_code == 0, result.output
            rows = [json.loads(line) for line in answers.read_text().splitlines()]
            return rows, json.loads(graded.read_text()), server.requests - before

        on_ray = run("ray", "cache-ray", "ray")
        local = run("local", "cache-local", "local")
        replay = run("local", "cache-ray", "replay")
    assert on_ray[0] == local[0] and on_ray[1] == local[1] and len(local[1]) == 4
    assert on_ray[2] == local[2] > 0
    assert replay[2] == 0 and replay[0] == on_ray[0] and replay[1] == on_ray[1]
    manifest = json.loads((tmp_path / "answers-ray.jsonl.manifest.json").read_text())
    assert "'engine': 'ray'" in str(manifest) or '"engine": "ray"' in json.dumps(manifest)


def test_a_worker_that_dies_once_is_restarted_by_ray(ray_cluster, tmp_path):
    texts = [f"passage {i} " + "word " * (i % 7) for i in range(40)]
    local = HashEmbedder().encode(texts)
    dying = HashEmbedder(tmp_path / "cache", die_on=texts[20], die_dir=tmp_path)
    with RAY.activate():
        got = dying.encode(texts)
    assert (tmp_path / "died").exists()  # the worker did die
    assert float(np.abs(got - local).max()) <= 1e-6


def test_a_worker_that_keeps_dying_stops_in_one_line_and_keeps_what_finished(ray_cluster, tmp_path, monkeypatch):
    from ragdiag.retrieval import ray_embed

    monkeypatch.setattr(ray_embed, "MAX_RESTARTS", 1)  # restarted once, then Ray gives up (each restart is a
    monkeypatch.setattr(ray_embed, "MAX_TASK_RETRIES", 1)  # new worker process: seconds on 2 cores)
    texts = [f"text number {i:02d}" for i in range(40)]
    dying = HashEmbedder(tmp_path / "cache", die_on=texts[0], die_dir=tmp_path, always=True)
    with EngineSettings(engine="ray", ray_workers=1).activate(), pytest.raises(RagdiagError) as caught:
        dying.encode(texts)
    message = str(caught.value)
    assert "\n" not in message and "vectors were embedded and cached: rerun" in message
    done = int(message.split(" of 40 vectors")[0].rsplit(" ", 1)[1])
    healthy = HashEmbedder(tmp_path / "cache")
    vectors = healthy.encode(texts)  # the rerun (local engine) embeds only what is missing
    assert healthy.stats.cache_hits == done and healthy.stats.embedded == 40 - done
    assert float(np.abs(vectors - HashEmbedder().encode(texts)).max()) <= 1e-6


def test_bad_options_are_one_line(ray_cluster, tmp_path):
    corpus = ["--corpus", str(SAMPLE), "--out-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "c")]
    assert "--ray-workers" in _one_line(_cli("index", "build", *corpus, "--engine", "ray", "--ray-workers", "0"))
    line = _one_line(_cli("index", "build", *corpus, "--engine", "ray", "--gpus-per-worker", "1"))
    assert "--gpus-per-worker 1" in line and "no GPU" in line
    assert not (tmp_path / "idx").exists()
    assert "--gpus-per-worker" in _one_line(_cli("index", "build", *corpus, "--engine", "ray", "--gpus-per-worker", "-1"))


def test_a_cluster_without_the_needed_packages_is_one_line(ray_cluster):
    from ragdiag.engine.settings import ray_session

    with RAY.activate(), pytest.raises(RagdiagError) as caught:
        ray_session().check_packages(["ragdiag", "no_such_module_i33"])
    assert "lacks no_such_module_i33 on its workers" in str(caught.value) and "\n" not in str(caught.value)
    assert "Ray cluster at 127.0.0.1:" in str(caught.value)  # the tests' instance listens on loopback only


def test_the_package_check_looks_modules_up_without_importing_them(ray_cluster):
    """A module that raises when imported passes the check: the task finds it, never runs it."""
    from ragdiag.engine.settings import ray_session

    with RAY.activate():
        ray_session().check_packages(["ragdiag", "tests.engine.import_refused"])


def test_the_pool_has_at_most_one_actor_per_batch():
    from ragdiag.retrieval.ray_embed import pool_size

    assert [pool_size(2, blocks) for blocks in (0, 1, 2, 5)] == [1, 1, 2, 2]
    assert pool_size(1024, 3) == 3 and pool_size(1, 40) == 1


def test_the_dataset_has_one_block_per_batch_as_given(ray_cluster):
    """The dataset holds the blocks as cut here, one per batch (a short last batch stays alone), so each
    actor call embeds one of the local engine's batches; ``from_blocks`` reads their metadata here."""
    import pyarrow as pa

    from ragdiag.retrieval.ray_embed import dataset_of

    blocks = [pa.table({"batch": [b] * n, "text": [f"t{b}-{i}" for i in range(n)]}) for b, n in enumerate((8, 8, 3))]
    dataset = dataset_of(blocks)
    assert dataset.num_blocks() == 3 and dataset.count() == 19
    sizes = [m.num_rows for bundle in dataset.iter_internal_ref_bundles() for m in bundle.metadata]
    assert sizes == [8, 8, 3]


def _node_processes() -> set[int]:
    import psutil

    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in ("raylet", "gcs_server")}


def _run_python(code: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def test_unreachable_address_and_missing_ray_are_one_line(tmp_path):
    start = time.perf_counter()
    cli = ("import sys; {pre}from ragdiag.cli import main; sys.argv = ['ragdiag'] + sys.argv[1:]; main()")
    args = ["index", "build", "--corpus", str(SAMPLE), "--out-dir", str(tmp_path / "idx"), "--cache-dir",
            str(tmp_path / "c"), "--engine", "ray", "--embedder", "local"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    unreachable = subprocess.run([sys.executable, "-c", cli.format(pre=""), *args, "--ray-address", "127.0.0.1:9"],
                                 capture_output=True, text=True, timeout=120, env=env)
    lines = unreachable.stderr.strip().splitlines()
    assert unreachable.returncode == 2 and len(lines) == 1, unreachable.stderr
    assert "--ray-address 127.0.0.1:9: cannot reach a Ray cluster" in lines[0]
    no_ray = subprocess.run([sys.executable, "-c", cli.format(pre="sys.modules['ray'] = None; "), *args],
                            capture_output=True, text=True, timeout=120, env=env)
    lines = no_ray.stderr.strip().splitlines()
    assert no_ray.returncode == 2 and len(lines) == 1, no_ray.stderr
    assert "pip install -e '.[ray]'" in lines[0]
    assert not (tmp_path / "idx").exists()
    assert time.perf_counter() - start < 60


LOCAL_INSTANCE = """
import sys
from ragdiag.engine.settings import EngineSettings
from ragdiag.retrieval import ray_embed
from tests.engine.hash_embedder import HashEmbedder
ray_embed.MAX_RESTARTS = ray_embed.MAX_TASK_RETRIES = 0  # the failure at once (restarts: the tests above)
texts = [f"t{i}" for i in range(20)]
with EngineSettings(engine="ray", ray_address="local", ray_workers=1).activate():
    print(HashEmbedder(batch_size=4).encode(texts).shape)
    import ray
    print("gcs", ray.get_runtime_context().gcs_address)
    HashEmbedder(batch_size=4, die_on="t0", die_dir=sys.argv[1], always=True).encode(texts)
"""


@pytest.mark.slow  # starts and stops a second Ray instance
def test_a_local_instance_started_for_the_run_is_stopped(ray_cluster, tmp_path):
    """--ray-address local starts its own instance; after a run that fails, none of its processes remain."""
    before = _node_processes()
    done = subprocess.run([sys.executable, "-c", LOCAL_INSTANCE, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert "(20, 16)" in done.stdout, done.stderr[-3000:]
    assert "gcs 127.0.0.1:" in done.stdout  # the local instance listens on loopback only
    assert "Ray embedding with test:hash stopped" in done.stderr
    deadline = time.monotonic() + 20
    while _node_processes() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _node_processes() - before == set()
