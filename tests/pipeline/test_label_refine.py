"""``label --refine`` (paper 001 §3.3.1, rag-gs S6) against a listwise test judge of known noise:
the refined Top-20 is closer (Kendall τ) to the hidden true order than one listwise call ranking
all 20 at once, on average over queries and seeds; the Plackett–Luce core on its own likewise."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from ragdiag.answers.listwise import parse_ranking
from ragdiag.cli import app
from ragdiag.evaluate.plackett_luce import (
    RefineParams,
    RefineState,
    final_order,
    refine,
    suffix_softmax_step,
    try_lock,
)
from tests.servers.listwise_judge import ListwiseJudgeServer, noisy_ranking


def _tau(order: list[str], truth: list[str]) -> float:
    return float(kendalltau(range(len(truth)), [order.index(d) for d in truth])[0])


def test_suffix_softmax_gradient_matches_numerical_derivative():
    rng = np.random.default_rng(0)
    theta, order = rng.normal(size=6), [3, 0, 5, 1]

    def loglik(t):
        return sum(t[order[s]] - np.log(np.exp(t[order[s:]]).sum()) for s in range(len(order)))

    grad, info = suffix_softmax_step(theta, order)
    for i in range(6):
        step = np.zeros(6)
        step[i] = 1e-6
        assert grad[i] == pytest.approx((loglik(theta + step) - loglik(theta - step)) / 2e-6, abs=1e-6)
    assert info[2] == 0 and info[4] == 0 and np.all(info[order[:-1]] > 0)


def test_locks_refuse_cycles_and_order_is_topological():
    state = RefineState.start(["a", "b", "c"], prior=[0.0, 1.0, 2.0])
    assert try_lock(state, 0, 1) and try_lock(state, 1, 2)
    assert not try_lock(state, 2, 0)  # would close a → b → c → a
    assert final_order(state) == [0, 1, 2]  # the locks win over θ (c has the highest θ)


def test_core_beats_single_shot_over_seeds():
    gains = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        items = [f"d{i}" for i in range(20)]
        truth_value = dict(zip(items, rng.random(20)))
        truth = sorted(items, key=lambda d: -truth_value[d])

        def judge(batch, seed=seed, truth_value=truth_value):
            digest = hashlib.sha256(f"{seed}|{'|'.join(batch)}".encode()).digest()
            order = noisy_ranking([truth_value[d] for d in batch], 0.3, np.random.default_rng(int.from_bytes(digest[:8], "little")))
            return [batch[i] for i in order]

        single = judge(items)
        refined = refine(single, judge, RefineParams(seed=seed)).order
        gains.append(_tau(refined, truth) - _tau(single, truth))
    print(f"core: mean Kendall τ gain over single-shot {np.mean(gains):+.3f} over 12 seeds")
    assert np.mean(gains) > 0.1


@pytest.mark.parametrize("text, size, expected", [
    ('{"ranking": [2, 1, 3]}', 3, [1, 0, 2]), ('Sure: {"ranking": [1,2]} done', 2, [0, 1]),
    ('{"ranking": [1, 1, 3]}', 3, None), ('{"ranking": [1, 2]}', 3, None), ('{"ranking": [true, 2]}', 2, None),
    ("no json", 2, None), (None, 2, None), ('{"ranking": "1,2"}', 2, None),
])
def test_parse_ranking(text, size, expected):
    assert parse_ranking(text, size) == expected


def _write_data(tmp_path, seed: int, queries: int = 3, per_query: int = 20):
    rng = np.random.default_rng(seed)
    corpus, run, truth = [], [], {}
    for q in range(queries):
        utilities = rng.random(per_query)
        docs = [f"q{q}d{i}" for i in range(per_query)]
        for doc, u in zip(docs, utilities):
            corpus.append({"_id": doc, "title": "", "text": f"Passage {doc} on topic {q}. [utility {u:.4f}]"})
        truth[f"q{q}"] = [d for _, d in sorted(zip(-utilities, docs))]
        run.append({"query_id": f"q{q}", "ids": list(rng.permutation(docs)), "scores": list(np.linspace(1, 0, per_query))})
    paths = {"corpus": tmp_path / "corpus.jsonl", "queries": tmp_path / "queries.jsonl", "run": tmp_path / "pool.jsonl"}
    paths["corpus"].write_text("".join(json.dumps(r) + "\n" for r in corpus))
    paths["queries"].write_text("".join(json.dumps({"_id": f"q{q}", "text": f"question {q}"}) + "\n" for q in range(queries)))
    paths["run"].write_text("".join(json.dumps(r) + "\n" for r in run))
    texts = {r["_id"]: r["text"] for r in corpus}
    return paths, truth, texts


def test_label_refine_end_to_end_beats_single_shot(tmp_path, monkeypatch):
    """Two seeds of 3 queries (~270 requests each: 60 labels, the rest listwise batches): the mean gain is
    +0.21 against the 0.05 asked (+0.23 with a third seed); test_core_beats_single_shot_over_seeds checks
    the gain over 12 seeds without the CLI."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    gains = []
    with ListwiseJudgeServer(sigma=0.3) as server:
        for seed in range(2):
            (tmp_path / f"s{seed}").mkdir()
            paths, truth, texts = _write_data(tmp_path / f"s{seed}", seed)
            out = tmp_path / f"s{seed}" / "qrels.tsv"
            args = ["label", "--corpus", str(paths["corpus"]), "--queries", str(paths["queries"]),
                    "--pool", f"run:{paths['run']}", "--pool-depth", "20", "--model", "test-model",
                    "--base-url", server.base_url, "--cache-dir", str(tmp_path / "cache"), "--refine",
                    "--refine-seed", str(seed), "--no-progress"]
            done = CliRunner().invoke(app, [*args, "--out", str(out)])
            assert done.exit_code == 0, done.output
            rows = [json.loads(line) for line in (tmp_path / f"s{seed}" / "qrels.tsv.refined.jsonl").read_text().splitlines()]
            assert len(rows) == 3
            for row in rows:
                q = row["query_id"]
                top = [d for d in truth[q] if d in row["order"]]
                single_order = noisy_ranking([float(texts[d].split("[utility ")[1][:-1]) for d in row["initial"]], 0.3,
                                             np.random.default_rng(seed * 100 + int(q[1:])))
                single = [row["initial"][i] for i in single_order]
                gains.append(_tau(row["order"], top) - _tau(single, top))
                assert row["judgements"] > 0 and sorted(row["order"]) == sorted(row["initial"])
            manifest = json.loads((tmp_path / f"s{seed}" / "qrels.tsv.manifest.json").read_text())
            assert manifest["refine"]["queries"] == 3 and manifest["refine"]["failed_batches"] == 0
            assert manifest["run_record"]["prompts"]["listwise-rank"] == "listwise-rank@v1"
            requests_before = server.requests
            again = CliRunner().invoke(app, [*args, "--out", str(out.with_name("again.tsv")), "--cache", "replay"])
            assert again.exit_code == 0, again.output
            assert server.requests == requests_before  # the refinement replays from the cache
            rerun = [json.loads(line) for line in out.with_name("again.tsv.refined.jsonl").read_text().splitlines()]
            assert [r["order"] for r in rerun] == [r["order"] for r in rows]
    print(f"label --refine: mean Kendall τ gain over single-shot {np.mean(gains):+.3f} on {len(gains)} queries")
    assert np.mean(gains) > 0.05


def test_refine_options_are_checked(tmp_path):
    done = CliRunner().invoke(app, ["label", "--corpus", "c", "--queries", "q", "--out", str(tmp_path / "o.tsv"),
                                    "--refine", "--refine-batch", "1", "--model", "m"])
    assert done.exit_code == 2 and "--refine-batch" in done.output


def test_toy_model_answers_label_and_listwise_prompts():
    from ragdiag.llm.prompts import load_prompt
    from tests.servers.toy_model import label_reply

    label = load_prompt("utility-label").messages(query="graphene conductivity", passage="Graphene has high conductivity.")
    assert json.loads(label_reply(label[-1]["content"]))["grade"] == 5
    listwise = load_prompt("listwise-rank").messages(query="graphene conductivity",
                                                     passages=["cats", "graphene", "graphene conductivity"])
    assert json.loads(label_reply(listwise[-1]["content"]))["ranking"] == [3, 2, 1]
