"""Bootstrap intervals of average recall and Robustness-δ@K, against scipy.stats.bootstrap, and in the CLI."""

from __future__ import annotations

import json

import numpy as np
from scipy.stats import bootstrap
from typer.testing import CliRunner

from ragdiag.bench.intervals import recall_intervals
from ragdiag.cli import app
from ragdiag.measures.sample import robustness_at_k

runner = CliRunner()


def _scipy_interval(values: np.ndarray, n_boot: int, seed: int) -> list[float]:
    ci = bootstrap((values,), np.mean, n_resamples=n_boot, method="percentile", rng=np.random.default_rng(seed),
                   vectorized=True).confidence_interval
    return [ci.low, ci.high]


def test_intervals_equal_scipy_percentile_bootstrap_on_the_same_seed():
    recalls = np.random.default_rng(5).integers(0, 11, 300) / 10
    deltas = (0.1, 0.3, 0.9)
    got = recall_intervals(recalls, deltas, 500, 11)
    assert np.allclose(got["recall_mean_ci"], _scipy_interval(recalls, 500, 11))
    for d in deltas:
        indicator = (recalls >= d - 1e-12).astype(float)
        assert np.allclose(got["robustness_ci"][f"{d:g}"], _scipy_interval(indicator, 500, 11))
        low, high = got["robustness_ci"][f"{d:g}"]
        assert low <= robustness_at_k(recalls, d) <= high


def test_interval_width_matches_the_binomial_standard_error():
    recalls = np.r_[np.zeros(200), np.ones(800)]  # Robustness-0.5 = 0.8 over 1000 queries
    low, high = recall_intervals(recalls, (0.5,), 4000, 0)["robustness_ci"]["0.5"]
    half = 1.96 * np.sqrt(0.8 * 0.2 / 1000)
    assert abs((high - low) / 2 - half) < 0.004


def test_robustness_cli_prints_and_writes_seeded_intervals(tmp_path):
    rng = np.random.default_rng(2)
    np.save(tmp_path / "b.npy", rng.standard_normal((800, 8)).astype(np.float32))
    np.save(tmp_path / "q.npy", rng.standard_normal((60, 8)).astype(np.float32))
    args = ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors", str(tmp_path / "q.npy"),
            "--k", "5", "--index-spec", "ivf:nlist=16,nprobe=1|2", "--delta", "0.2,0.8", "--latency-queries", "5",
            "--qps-repeats", "1", "--bootstrap", "200", "--seed", "4"]
    first = runner.invoke(app, [*args, "--out", str(tmp_path / "a.json")])
    assert first.exit_code == 0, first.output
    assert "[95% CI: 200 bootstrap resamples of queries]" in " ".join(first.output.split())  # the title wraps
    second = runner.invoke(app, [*args, "--out", str(tmp_path / "b.json"), "--per-query", str(tmp_path / "pq.jsonl")])
    assert second.exit_code == 0, second.output
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    rows = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    for i, (pa, pb) in enumerate(zip(a["points"], b["points"])):
        assert pa["recall_mean_ci"] == pb["recall_mean_ci"] and pa["robustness_ci"] == pb["robustness_ci"]
        recalls = np.array([r["recall"] for r in rows if r["point"] == i])
        assert np.allclose(pa["recall_mean_ci"], _scipy_interval(recalls, 200, 4))
    assert a["meta"]["bootstrap"]["resamples"] == 200
    page = runner.invoke(app, ["report", str(tmp_path / "a.json"), "--out", str(tmp_path / "page.html")])
    assert page.exit_code == 0, page.output
    low, high = a["points"][0]["robustness_ci"]["0.8"]
    assert f"[{low:.3f}, {high:.3f}]" in (tmp_path / "page.html").read_text()
    bad = runner.invoke(app, [*args[:-4], "--bootstrap", "-1"])  # [0, 1000000]; 1-99 resamples work (issue 17)
    assert bad.exit_code == 2 and "--bootstrap" in bad.output
    few = runner.invoke(app, [*args[:-4], "--bootstrap", "5", "--format", "json"])
    assert few.exit_code == 0, few.output
    assert json.loads(few.stdout)["meta"]["bootstrap"]["resamples"] == 5
    assert all(len(p["recall_mean_ci"]) == 2 for p in json.loads(few.stdout)["points"])


def test_bootstrap_zero_means_no_intervals(tmp_path):
    """--bootstrap 0: the points carry no interval keys, the table says there are none."""
    rng = np.random.default_rng(3)
    np.save(tmp_path / "b.npy", rng.standard_normal((200, 8)).astype(np.float32))
    np.save(tmp_path / "q.npy", rng.standard_normal((20, 8)).astype(np.float32))
    args = ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors", str(tmp_path / "q.npy"),
            "--k", "5", "--index-spec", "ivf:nlist=4,nprobe=1|2", "--latency-queries", "5", "--qps-repeats", "1",
            "--bootstrap", "0", "--match-recall", "0.6"]
    table = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "95% CI: — (--bootstrap 0)" in " ".join(table.stdout.split())
    assert "[0." not in table.stdout and "[1." not in table.stdout  # no interval in any cell
    out = runner.invoke(app, [*args, "--format", "json"])
    doc = json.loads(out.stdout)
    assert doc["meta"]["bootstrap"]["resamples"] == 0
    assert all("recall_mean_ci" not in p and "robustness_ci" not in p for p in doc["points"])
