"""``ragdiag dynamic-k`` against ``ragdiag evaluate --per-query`` run at each pool depth: every
policy's means are the mean of the per-query mix the policy picks, computed here from those files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.evaluate.dynamic_k import escalated, score_margins, thresholds


def _write_inputs(tmp_path, seed: int = 3, queries: int = 30):
    rng = np.random.default_rng(seed)
    qrels, low, high, signal = ["query-id\tcorpus-id\tscore"], [], [], []
    for q in range(queries):
        docs = [f"d{q}-{i}" for i in range(40)]
        for doc in docs[:25]:
            qrels.append(f"q{q}\t{doc}\t{int(rng.integers(1, 6))}")
        order_high = list(rng.permutation(docs)[:20])
        order_low = list(rng.permutation(docs[:30])[:10])
        scores = sorted(rng.random(20).tolist(), reverse=True)
        high.append({"query_id": f"q{q}", "ids": order_high, "scores": scores})
        low.append({"query_id": f"q{q}", "ids": order_low, "scores": scores[:10]})
        signal.append({"query_id": f"q{q}", "value": float(rng.normal())})
    paths = {name: tmp_path / name for name in ("qrels.tsv", "low.jsonl", "high.jsonl", "signal.jsonl")}
    paths["qrels.tsv"].write_text("\n".join(qrels) + "\n")
    for name, rows in (("low.jsonl", low), ("high.jsonl", high), ("signal.jsonl", signal)):
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths


def _per_query(tmp_path, paths, run: str, depth: int) -> dict[str, dict[str, float]]:
    rows = tmp_path / f"{run}-{depth}.jsonl"
    done = CliRunner().invoke(app, ["evaluate", "--run", str(paths[run]), "--qrels", str(paths["qrels.tsv"]),
                                    "--k", "5", "--pool-depth", str(depth), "--metrics", "ra_nwg,nrecall4,proc",
                                    "--bootstrap", "0", "--per-query", str(rows), "--format", "json"])
    assert done.exit_code == 0, done.output
    out = {}
    for line in rows.read_text().splitlines():
        row = json.loads(line)
        out[row["query_id"]] = {f"{m}@5": row[m] for m in ("ra_nwg", "nrecall4", "proc")}
    return out


@pytest.mark.parametrize("escalate_when, signal_args", [("above", ["--signal", "SIGNAL"]), ("below", [])])
def test_policies_equal_the_per_query_mix_of_evaluate(tmp_path, escalate_when, signal_args):
    paths = _write_inputs(tmp_path)
    args = [a.replace("SIGNAL", str(paths["signal.jsonl"])) for a in signal_args]
    out = tmp_path / "dk.json"
    done = CliRunner().invoke(app, ["dynamic-k", "--qrels", str(paths["qrels.tsv"]), "--run-low", str(paths["low.jsonl"]),
                                    "--run-high", str(paths["high.jsonl"]), "--k-low", "10", "--k-high", "20",
                                    "--ks", "5", "--escalate-when", escalate_when, "--steps", "5", "--bootstrap", "200",
                                    "--price", "0.05", "--out", str(out), *args])
    assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    low, high = _per_query(tmp_path, paths, "low.jsonl", 10), _per_query(tmp_path, paths, "high.jsonl", 20)
    queries = sorted(low, key=lambda q: int(q[1:]))
    if signal_args:
        by_query = {json.loads(x)["query_id"]: json.loads(x)["value"] for x in paths["signal.jsonl"].read_text().splitlines()}
        signal = np.array([by_query[q] for q in queries])
    else:
        runs = {json.loads(x)["query_id"]: json.loads(x)["scores"] for x in paths["low.jsonl"].read_text().splitlines()}
        signal = np.array([runs[q][0] - runs[q][9] for q in queries])
    assert [r["label"] for r in doc["policies"]][::len(doc["policies"]) - 1] == ["fixed K_low", "fixed K_high"]
    assert len(doc["policies"]) == 7  # fixed K_low, 5 quantiles, fixed K_high
    for row in doc["policies"]:
        if row["threshold"] is None:
            up = np.full(len(queries), row["label"] == "fixed K_high")
        else:
            up = signal < row["threshold"] if escalate_when == "below" else signal > row["threshold"]
        assert row["share_escalated"] == pytest.approx(up.mean())
        assert row["mean_candidates"] == pytest.approx(np.where(up, 20, 10).mean())
        assert row["cost_per_1k"] == pytest.approx(1000 * row["mean_candidates"] * 500 * 0.05 / 1e6)
        for name in ("ra_nwg@5", "nrecall4@5", "proc@5"):
            mixed = [high[q][name] if u else low[q][name] for q, u in zip(queries, up)]
            defined = [v for v in mixed if v is not None]
            assert row["metrics"][name]["value"] == pytest.approx(np.mean(defined), abs=1e-12)
            base = [low[q][name] for q in queries]
            diffs = [m - b for m, b in zip(mixed, base) if m is not None and b is not None]
            assert row["vs_low"][name]["value"] == pytest.approx(np.mean(diffs), abs=1e-12)
            lo, hi = row["vs_low"][name]["ci"]
            assert lo <= row["vs_low"][name]["value"] + 1e-12 and row["vs_low"][name]["value"] <= hi + 1e-12
    assert "escalating" in done.output and "fixed K_high" in done.output


def test_helpers():
    assert score_margins([[0.9, 0.5, 0.1], [], [0.4]], 2).tolist()[::2] == [pytest.approx(0.4), 0.0]
    assert np.isnan(score_margins([[]], 2)[0])
    signal = np.array([0.1, 0.5, np.nan, 0.9])
    assert thresholds(signal, 3) == [0.1, 0.5, 0.9]
    assert escalated(signal, 0.5, "below").tolist() == [True, False, True, False]
    assert escalated(signal, 0.5, "above").tolist() == [False, False, True, True]


@pytest.mark.parametrize("extra, message", [
    (["--k-low", "20", "--k-high", "20"], "must be below --k-high"),
    (["--ks", "15"], "every cut-off must be ≤ --k-low 10"),
    (["--k-high", "40"], "fewer than the K it stands for (40)"),
    (["--escalate-when", "sideways"], "choose below or above"),
    (["--signal", "SIGNAL", "--signal-run", "LOW"], "give one"),
    (["--price", "nan"], "--price"),
])
def test_bad_input_is_one_line(tmp_path, extra, message):
    paths = _write_inputs(tmp_path, queries=5)
    extra = [a.replace("SIGNAL", str(paths["signal.jsonl"])).replace("LOW", str(paths["low.jsonl"])) for a in extra]
    args = ["--k-low", "10", "--k-high", "20", "--ks", "5", *extra]
    done = CliRunner().invoke(app, ["dynamic-k", "--qrels", str(paths["qrels.tsv"]), "--run-low", str(paths["low.jsonl"]),
                                    "--run-high", str(paths["high.jsonl"]), *args])
    assert done.exit_code == 2, done.output
    assert message in done.output


def test_signal_file_missing_a_query(tmp_path):
    paths = _write_inputs(tmp_path, queries=5)
    lines = paths["signal.jsonl"].read_text().splitlines()
    paths["signal.jsonl"].write_text("\n".join(lines[1:]) + "\n")
    done = CliRunner().invoke(app, ["dynamic-k", "--qrels", str(paths["qrels.tsv"]), "--run-low", str(paths["low.jsonl"]),
                                    "--run-high", str(paths["high.jsonl"]), "--k-low", "10", "--k-high", "20", "--ks", "5",
                                    "--signal", str(paths["signal.jsonl"])])
    assert done.exit_code == 2 and "no signal for 1 judged queries (first: 'q0')" in done.output


def test_signal_file_naming_a_query_twice_is_refused(tmp_path):
    """Issue 29: the last value used to win silently."""
    paths = _write_inputs(tmp_path, queries=5)
    lines = paths["signal.jsonl"].read_text().splitlines()
    paths["signal.jsonl"].write_text("\n".join([*lines, json.dumps({"query_id": "q2", "value": 9.0})]) + "\n")
    before = paths["signal.jsonl"].read_bytes()
    out = tmp_path / "dk.json"
    done = CliRunner().invoke(app, ["dynamic-k", "--qrels", str(paths["qrels.tsv"]), "--run-low", str(paths["low.jsonl"]),
                                    "--run-high", str(paths["high.jsonl"]), "--k-low", "10", "--k-high", "20", "--ks", "5",
                                    "--signal", str(paths["signal.jsonl"]), "--out", str(out)])
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert (f"{paths['signal.jsonl']}: line 6: field 'query_id': 'q2' already has a value on line 3"
            in done.output)
    assert paths["signal.jsonl"].read_bytes() == before and not out.exists()
