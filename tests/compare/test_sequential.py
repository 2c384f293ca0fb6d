"""compare --sequential: the confidence sequences against confseq and their own definitions, e-Holm
against brute-force closed testing, time-uniform coverage by simulation, and the command end to end."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_ndtr

from ragdiag.compare import sequential as cs

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("case", json.loads((DATA / "confseq_betting_reference.json").read_text())["cases"],
                         ids=lambda c: f"{c['distribution']}-a{c['alpha']}")
def test_betting_bounds_equal_confseq(case):
    """Lower and upper bounds (running intersection) equal confseq 0.0.11's betting_lower_cs on the same grid."""
    x = np.array(case["x"])
    b = cs.betting(x, case["alpha"], -0.5, 0.0, 1.0, 1)
    np.testing.assert_allclose(b.lower, case["lower"], atol=1e-12)
    np.testing.assert_allclose(b.upper, case["upper"], atol=1e-12)


def test_mixture_radius_solves_the_boundary_and_is_inside_the_closed_form():
    """M_t(s*) = 1/α, and s* ≤ the closed-form one-sided bound √(2(1+tρ²)/ρ² · log(1 + √(1+tρ²)/(2α)))
    that Howard et al. give as an upper bound of the exact one-sided mixture boundary."""
    alpha, t = 0.05, np.array([1.0, 10.0, 100.0, 1000.0, 10_000.0])
    rho2 = cs.optimal_rho2(alpha, 500)
    s = cs._mixture_radius(t, alpha, rho2)
    v = 1 + t * rho2
    log_m = math.log(2) - 0.5 * np.log(v) + rho2 * s**2 / (2 * v) + log_ndtr(math.sqrt(rho2) * s / np.sqrt(v))
    np.testing.assert_allclose(log_m, -math.log(alpha), rtol=1e-9)
    closed = np.sqrt(2 * v / rho2 * np.log(1 + np.sqrt(v) / (2 * alpha)))
    assert (s <= closed + 1e-9).all() and (s >= 0.8 * closed).all()


def _brute_e_holm(e: np.ndarray, alpha: float) -> np.ndarray:
    k = len(e)
    out = np.zeros(k, dtype=bool)
    for i in range(k):
        out[i] = all(np.mean(e[list(subset)]) >= 1 / alpha
                     for size in range(1, k + 1) for subset in itertools.combinations(range(k), size) if i in subset)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_e_holm_equals_closed_testing_over_every_subset(seed):
    rng = np.random.default_rng(seed)
    e = np.exp(rng.normal(2.5, 2.0, rng.integers(1, 7)))
    np.testing.assert_array_equal(cs.e_holm(e, 0.05), _brute_e_holm(e, 0.05))


@pytest.mark.parametrize("kind", ["betting", "asymptotic"])
def test_time_uniform_coverage(kind):
    """Over 150 seeded streams of 300 draws, the true mean leaves the one-sided lower bound at some
    look in at most α + 3 points of them (Ville), where a fixed-n t bound looked at after every
    query leaves it far more often."""
    rng = np.random.default_rng(7)
    alpha, misses, t_misses = 0.05, 0, 0
    from scipy.stats import t as student

    for _ in range(150):
        g = np.clip(rng.normal(0.0, 0.25, 300), -1, 1)
        b = cs.betting(g, alpha, 0.0, -1, 1, 5) if kind == "betting" else cs.asymptotic(g, alpha, 0.0, 300, 20)
        misses += bool(np.nanmax(b.lower) > 0.0)
        n = np.arange(1, 301)
        mean = np.cumsum(g) / n
        sd = np.sqrt(np.maximum(np.cumsum(g * g) / n - mean**2, 0) * n / np.maximum(n - 1, 1))
        low = mean[4:] - student.ppf(1 - alpha, n[4:] - 1) * sd[4:] / np.sqrt(n[4:])
        t_misses += bool((low > 0).any())
    assert misses / 150 <= alpha + 0.03
    assert t_misses / 150 > 2 * alpha


def test_e_values_cross_exactly_when_the_bound_passes_the_margin():
    """The betting e-process against 'no drop beyond m' reaches 1/α no later than the upper bound falls below −m."""
    rng = np.random.default_rng(3)
    g = np.clip(rng.normal(-0.15, 0.2, 300), -1, 1)
    b = cs.betting(g, 0.05, 0.01, -1, 1, 5)
    below = np.flatnonzero(b.upper < -0.01)
    crossed = np.flatnonzero(b.e_regression >= 20)
    assert below.size and crossed.size and crossed[0] <= below[0]


# --- the command -----------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
RUNS = ["--base", str(FIXTURES / "base.jsonl"), "--new", str(FIXTURES / "new.trec"), "--qrels", str(FIXTURES / "qrels.tsv")]


def _compare(tmp_path, *args):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    return CliRunner().invoke(app, ["compare", *args])


def test_sequential_writes_the_sequence_and_reruns_identically(tmp_path):
    outs = []
    for name in ("a.json", "b.json"):
        result = _compare(tmp_path, *RUNS, "--sequential", "--out", str(tmp_path / name))
        assert result.exit_code == 1, result.output  # nDCG@10 regresses on the bundled runs
        doc = json.loads((tmp_path / name).read_text())
        doc.pop("run_record")
        outs.append(doc)
    assert outs[0] == outs[1]
    seq = outs[0]["sequential"]
    assert seq["sequence"] == "asymptotic" and seq["order"] == "random (seed 0)"
    ndcg = next(m for m in seq["metrics"] if m["metric"] == "ndcg@10")
    assert ndcg["decision"] == "regression" and ndcg["decided_at"] is not None
    assert len(ndcg["n"]) == len(ndcg["lower"]) == len(ndcg["upper"]) and ndcg["n"][-1] == seq["stopped_at"]
    looks = [(lo, hi) for lo, hi in zip(ndcg["lower"], ndcg["upper"]) if lo is not None]
    assert all(a[0] <= b[0] and a[1] >= b[1] for a, b in zip(looks, looks[1:]))  # running intersection
    assert "decided at query" in " ".join(result.output.split())


def test_another_seed_reads_another_order(tmp_path):
    docs = []
    for seed in ("0", "5"):
        _compare(tmp_path, *RUNS, "--sequential", "--sequence", "asymptotic", "--seed", seed, "--out", str(tmp_path / f"{seed}.json"))
        docs.append(json.loads((tmp_path / f"{seed}.json").read_text())["sequential"]["metrics"][0]["lower"])
    assert docs[0] != docs[1]


from tests.compare.test_compare_cli import _table  # noqa: E402  (one CSV writer for the compare tests)


def test_bad_sequential_input_is_one_line_and_exit_2(tmp_path):
    rows = [{"query_id": f"q{i}", "score": 0.5 + 0.01 * i, "t": i, "doc": f"d{i // 3}", "one": "x", "own": f"u{i}"}
            for i in range(30)]
    base = _table(tmp_path / "b.csv", rows)
    new = _table(tmp_path / "n.csv", [dict(r, score=r["score"] - 0.02) for r in rows])
    pair = ["--base", str(base), "--new", str(new), "--metrics", "score"]
    cases = [
        ([*pair, "--sequential", "--sequence", "betting"], "--bounds"),
        ([*pair, "--bounds", "0,1"], "goes with --sequential"),
        ([*pair, "--sequential", "--bounds", "1,0"], "LOW < HIGH"),
        ([*pair, "--sequential", "--bounds", "0.6,1"], "outside the bounds"),
        ([*pair, "--sequential", "--order-col", "nope"], "no such column"),
        ([*pair, "--cluster-col", "nope"], "no such column"),
        ([*pair, "--cluster-col", "one"], "at least 2 clusters"),
        ([*pair, "--cluster-col", "own"], "every cluster holds one query"),
        ([*pair, "--sequential", "--cluster-col", "doc"], "does not take"),
        ([*RUNS, "--cluster-by", "doc"], "--queries"),
    ]
    for args, words in cases:
        result = _compare(tmp_path, *args, "--out", str(tmp_path / "never.json"))
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output, (args, result.output)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("ragdiag: error:"), (args, result.output)
        assert not (tmp_path / "never.json").exists()


def test_order_col_and_cluster_col_end_to_end(tmp_path):
    rows = [{"query_id": f"q{i}", "score": 0.5 + 0.01 * (i % 7), "t": 30 - i, "doc": f"d{i // 3}"} for i in range(30)]
    base = _table(tmp_path / "b.csv", rows)
    new = _table(tmp_path / "n.csv", [dict(r, score=r["score"] - 0.4) for r in rows])
    pair = ["--base", str(base), "--new", str(new), "--metrics", "score"]
    result = _compare(tmp_path, *pair, "--sequential", "--sequence", "betting", "--order-col", "t", "--bounds", "0,1",
                      "--out", str(tmp_path / "s.json"))
    assert result.exit_code == 1, result.output
    seq = json.loads((tmp_path / "s.json").read_text())["sequential"]
    assert seq["order"] == "column t" and seq["metrics"][0]["decision"] == "regression"
    assert seq["stopped_at"] < 30
    result = _compare(tmp_path, *pair, "--cluster-col", "doc", "--out", str(tmp_path / "c.json"))
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["meta"]["clusters"] == 10 and "cluster-robust t (CR1, 10 clusters" in doc["meta"]["test_detail"]
