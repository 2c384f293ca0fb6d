"""``ragdiag sweep`` output a person can act on at 80 columns: QPS with its spread, repeats raised
until 1,000 query searches are timed, a warning for small batches, names and intervals never cut."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.sweep.run import qps_repeats, qps_timing
from tests.sweep.synthetic_corpus import MODEL


def test_repeats_reach_1000_timed_queries():
    assert qps_repeats(40, 1) == 25 and qps_repeats(40, 30) == 30
    assert qps_repeats(5000, 3) == 3 and qps_repeats(1, 1) == 200  # capped
    assert qps_timing(2000, 3)["warning"] is None
    assert qps_timing(40, 25)["warning"].startswith("QPS is timed on batches of 40 queries (< 1,000)")


def test_sweep_prints_qps_spread_and_fits_80_columns(workdir, corpus, servers):
    toy, embed = servers
    out = workdir / "sweep80"
    result = CliRunner().invoke(app, [
        "sweep", "--corpus", str(corpus), "--index", "hnsw:M=4,efConstruction=8,efSearch=1|16", "--k", "5",
        "--bootstrap", "200", "--embedder", f"openai:{MODEL}", "--embed-base-url", embed.base_url,
        "--model", "ragdiag-test-server", "--base-url", toy.base_url, "--cache-dir", str(workdir / "cache"),
        "--no-progress", "--latency-queries", "10", "--qps-repeats", "1", "--controls", "exact,empty",
        "--out-dir", str(out)], env={"COLUMNS": "80"})  # no gold control: its one-line note is not a table
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "sweep.json").read_text())["meta"]
    n = meta["n_queries"]
    assert meta["qps_timing"]["repeats"] == -(-1000 // n) and meta["qps_timing"]["timed_queries"] >= 1000
    text = result.output
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    assert "│ hnsw efSearch=16 │" in text  # the point name whole on one line of the tables
    assert f"warning: QPS is timed on batches of {n} queries" in text
    assert text.startswith("TEST SERVER: the replies and grades are ragdiag's test-server output")
    point = json.loads((out / "sweep.json").read_text())["points"][0]
    runs = point["qps_batch_runs"]
    assert runs["repeats"] == meta["qps_timing"]["repeats"] and runs["min"] <= point["qps_batch"] <= runs["max"]
