"""``pipeline --corpus``: own corpus, queries and qrels through the retrieval core, then generate →
grade → correlate, with the toy model (a test server, not an LLM) and the embeddings test server."""

from __future__ import annotations

import json
import re

import pytest

from ragdiag.commands.pipeline import CorpusRunConfig, run_corpus_pipeline
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from tests.servers.embeddings_server import EmbeddingsServer
from tests.servers.toy_model import ToyModel
from tests.sweep.synthetic_corpus import DIM, MODEL, write_corpus

DENSE = f"dense:openai:{MODEL}:hnsw:M=8,efSearch=16"


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    corpus = write_corpus(tmp_path / "synthetic", n_docs=120, n_queries=12)
    with ToyModel() as toy, EmbeddingsServer(dim=DIM) as embed:
        config = ClientConfig(model="toy", base_url=toy.base_url, cache_dir=tmp_path / "cache", workers=4)
        yield tmp_path, corpus, toy, embed, config


def _cfg(tmp_path, corpus, embed, **kw):
    base = dict(corpus=corpus, retrievers=[DENSE, "bm25", f"hybrid:{DENSE}+bm25"], ks=[1, 3, 5], out_dir=tmp_path / "run",
                embed_base_url=embed.base_url, min_samples=1, bootstrap=100)
    return CorpusRunConfig(**{**base, **kw})


def test_corpus_pipeline_end_to_end(setup):
    tmp_path, corpus, toy, embed, config = setup
    result = run_corpus_pipeline(_cfg(tmp_path, corpus, embed), config, progress=False)
    run = tmp_path / "run"
    ranked = json.loads((run / "samples_ranked.json").read_text())
    texts = {t["id"]: t for t in json.loads((run / "samples_texts.json").read_text())}
    qrels = dict(line.split("\t")[:2] for line in (corpus / "qrels" / "test.tsv").read_text().splitlines()[1:])
    assert len(ranked) == 12 * 3 and {r["E"] for r in ranked} == {DENSE, "bm25", f"hybrid:{DENSE}+bm25"}
    for r in ranked:
        sample = texts[r["id"]]
        assert r["id"] == f"synthetic-{sample['query_id']}" and r["depth"] == 5 and r["Np"] == 1
        assert r["Nc"] == 1 + len(sample["n_ids"]) and sorted(r["rank"]) == list(range(r["Nc"]))
        assert sample["p_ids"] == [qrels[sample["query_id"]]]
        ids = [sample["p_ids"][i] if i < r["Np"] else sample["n_ids"][i - r["Np"]] for i in r["rank"][:5]]
        run_row = next(json.loads(line) for line in (run / "runs" / f"{_safe(r['E'])}.jsonl").read_text().splitlines()
                       if json.loads(line)["query_id"] == sample["query_id"])
        assert ids == run_row["ids"]  # the ranked sample is the retriever's run, in the schema's indices
    dense = [r for r in ranked if r["E"] == DENSE]
    # the relevant document is each query's nearest neighbour: HNSW finds it at rank 1 here
    assert sum(r["rank"][0] == 0 for r in dense) >= 10
    graded = json.loads((run / "graded.json").read_text())
    assert len(graded) == 12 * 3 * 3 and all(g["grade"] is not None for g in graded)
    by_hit = {}
    for g in graded:
        by_hit.setdefault(sum(g["inK"]) > 0, []).append(g["grade"])
    assert min(by_hit[True]) == 5 and max(by_hit.get(False, [1])) < 5  # toy judge: relevant shown ⇔ 5
    manifest = json.loads((run / "corpus_run.json").read_text())
    assert manifest["meta"]["queries"]["used"] == 12 and manifest["meta"]["evaluate"].startswith("skipped")
    assert any(i["path"].endswith("corpus.jsonl") for i in manifest["run_record"]["inputs"])
    assert (run / "correlation.json").is_file() and result.evaluation is None


def _safe(name):
    from ragdiag.pipeline.corpus_run import safe_name as safe

    return safe(name)


def test_graded_qrels_are_evaluated(setup):
    tmp_path, corpus, toy, embed, config = setup
    qrels = corpus / "qrels" / "test.tsv"
    rows = qrels.read_text().splitlines()
    qrels.write_text("\n".join([rows[0]] + [r[:-1] + ("3" if i % 2 else "2") for i, r in enumerate(rows[1:])]) + "\n")
    result = run_corpus_pipeline(_cfg(tmp_path, corpus, embed, retrievers=["bm25"]), config, progress=False)
    assert result.evaluation is not None and (tmp_path / "run" / "evaluation.json").is_file()


@pytest.mark.parametrize("kw, expected", [
    ({"retrievers": ["dense:local:hnsw:efSearch=1|2"]}, "one operating point per retriever"),
    ({"retrievers": ["sparse"]}, "unknown kind 'sparse'"),
    ({"retrievers": ["hybrid:bm25"]}, "expected hybrid:A+B"),
    ({"ks": [2, 10], "depth": 5}, "--k 10 is larger than the retrieval depth 5"),
    ({"ks": [200]}, "retrieval depth 200 is larger than the 120 passages"),
])
def test_bad_specs_fail_before_work(setup, kw, expected):
    tmp_path, corpus, toy, embed, config = setup
    with pytest.raises(RagdiagError, match=re.escape(expected)):
        run_corpus_pipeline(_cfg(tmp_path, corpus, embed, **kw), config, progress=False)
    assert toy.requests == 0 and embed.requests == 0


def _cli(tmp_path, toy, embed, *args):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    full = ["pipeline", *map(str, args), "--model", "toy", "--base-url", toy.base_url, "--cache-dir",
            str(tmp_path / "cache"), "--no-progress", "--min-samples", "1"]
    if embed is not None:
        full += ["--embed-base-url", embed.base_url]
    return CliRunner().invoke(app, full)


def test_cli_corpus_path(setup):
    tmp_path, corpus, toy, embed, _ = setup
    res = _cli(tmp_path, toy, embed, "--corpus", corpus, "--retriever", DENSE, "--retriever", "bm25", "--ks", "1,3",
               "--out-dir", tmp_path / "cli-run")
    assert res.exit_code == 0, res.output
    graded = json.loads((tmp_path / "cli-run" / "graded.json").read_text())
    assert len(graded) == 12 * 2 * 2


@pytest.mark.parametrize("args, expected", [
    (["--retriever", "bm25", "--texts", "x.json"], "--retriever needs --corpus"),
    (["--corpus", "{corpus}", "--texts", "x.json", "--retriever", "bm25"], "does not take --texts"),
    (["--corpus", "{corpus}"], "--corpus needs at least one --retriever"),
    (["--corpus", "{corpus}", "--retriever", "dense:local:hnsw:M=oops"], "M='oops' is not an integer"),
    (["--corpus", "{corpus}", "--retriever", "bm25", "--ks", "3,8", "--depth", "5"], "--k 8 is larger than the retrieval depth 5"),
    (["--corpus", "{bad_doc}", "--retriever", "bm25"], "document 'nope' (judged for query 'q1') is not in"),
    (["--corpus", "{bad_query}", "--retriever", "bm25"], "query 'q-none' is not in"),
    (["--corpus", "{no_overlap}", "--retriever", "bm25"], "is judged"),
])
def test_cli_bad_input_one_line(setup, args, expected):
    tmp_path, corpus, toy, embed, _ = setup
    folders = {"corpus": corpus}
    for name, rows in (("bad_doc", "q1\tnope\t1\n"), ("bad_query", "q-none\td1\t1\n"), ("no_overlap", None)):
        folder = write_corpus(tmp_path / name, n_docs=120, n_queries=12)
        qrels = folder / "qrels" / "test.tsv"
        qrels.write_text(qrels.read_text() + rows if rows else "query-id\tcorpus-id\tscore\nzz\td1\t1\n")
        folders[name] = folder
    res = _cli(tmp_path, toy, None, *[a.format(**folders) for a in args], "--out-dir", tmp_path / "o")
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: ") and expected in lines[0], res.output
    assert toy.requests == 0


def test_short_lists_are_dropped_and_tail_follows_in_candidate_order(tmp_path):
    from ragdiag.pipeline.corpus_inputs import load_corpus_data
    from ragdiag.pipeline.corpus_run import build_samples

    data = load_corpus_data(write_corpus(tmp_path / "c", n_docs=30, n_queries=2))
    rel = [data.row_of[data.relevant[q][0]] for q in data.query_ids]
    others = [r for r in range(30) if r not in rel]
    rankings = {"A": [[(others[0], 3.0), (rel[0], 2.0), (others[1], 1.0)], [(others[2], 1.0)]],  # query 2: 1 < depth 3
                "B": [[(others[3], 2.0), (others[0], 1.0), (others[4], 0.5)], [(rel[1], 9.0), (others[2], 1.0), (others[5], 0.1)]]}
    texts, ranked, skipped, short = build_samples(data, rankings, [1, 3], 3, ideal_cap=10)
    assert short == 1 and skipped == [] and len(ranked) == 3
    a0 = next(r for r in ranked if r["E"] == "A" and r["id"].endswith(data.query_ids[0]))
    # candidates: relevant (0), then A's negatives others[0] (1), others[1] (2), then B's others[3] (3), others[4] (4)
    assert a0["rank"] == [1, 0, 2, 3, 4] and a0["Nc"] == 5 and a0["P"] == [0.0, 1 / 3] and a0["R"] == [0.0, 1.0]
    assert texts[0]["n_ids"] == [data.doc_ids[r] for r in (others[0], others[1], others[3], others[4])]
