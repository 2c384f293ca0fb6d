"""``probe names`` on a user's own queries (paper 001 §4.5): name detection on real query styles,
and the retrieval change checked against ``ragdiag evaluate --per-query`` on runs ranked here with
numpy from the test server's known vectors (an independent search and the evaluated metrics)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.probes.real_names import ablate, find_names, name_lists
from tests.servers.embeddings_server import EmbeddingsServer, vector_for

MODEL = "text-embedding-3-small"


@pytest.mark.parametrize("lang, text, names", [
    ("en", "where was paul newman born?", ["paul newman"]),
    ("en", "where did captain james cook explore?", ["james cook"]),
    ("en", "Which works by Jean-Paul Martin on graphene?", ["Jean-Paul Martin"]),
    ("en", "what is the meaning of chicken rice?", []),
    ("en", "Papers by J. R. Smith about sleep", ["J. R. Smith"]),
    ("fr", "Quels travaux publiés par Émilie Dupont sur le sommeil ?", ["Émilie Dupont"]),
    ("fr", "Qu'est-ce que la médiation familiale ?", []),
])
def test_detection(lang, text, names):
    found = [text[a:b] for a, b in find_names(text, name_lists(lang))]
    assert found == names


def test_extra_names_and_ablations():
    lists = name_lists("en", ["Tolkien"])
    text = "books by tolkien and by Paul Newman"
    spans = find_names(text, lists)
    assert [text[a:b] for a, b in spans] == ["tolkien", "Paul Newman"]
    assert ablate(text, spans, "mask", "en", None) == "books by NAME and by NAME"
    gib = ablate(text, spans, "gibberish", "en", None)
    assert gib.startswith("books by ID-") and gib.count("ID-") == 2
    assert ablate(text, spans, "replace", "en", lambda name: "X Y") == "books by X Y and by X Y"


def _data(tmp_path):
    rng = np.random.default_rng(0)
    corpus = [{"_id": f"d{i}", "title": "", "text": f"document {i} about topic {i % 7}"} for i in range(60)]
    queries = [{"_id": "q1", "text": "where was paul newman born"}, {"_id": "q2", "text": "papers by James Cook on sleep"},
               {"_id": "q3", "text": "anthony hopkins films"}, {"_id": "q4", "text": "graphene conductivity"},
               {"_id": "q5", "text": "who is david tate"}]
    qrels = ["query-id\tcorpus-id\tscore"]
    for q in queries:
        for d in rng.choice(60, 12, replace=False):
            qrels.append(f"{q['_id']}\td{d}\t{int(rng.integers(1, 6))}")
    paths = {n: tmp_path / n for n in ("corpus.jsonl", "queries.jsonl", "qrels.tsv")}
    paths["corpus.jsonl"].write_text("".join(json.dumps(r) + "\n" for r in corpus))
    paths["queries.jsonl"].write_text("".join(json.dumps(r) + "\n" for r in queries))
    paths["qrels.tsv"].write_text("\n".join(qrels) + "\n")
    return paths, corpus, queries


def _numpy_run(texts: dict[str, str], corpus: list[dict], k: int) -> list[dict]:
    docs = np.stack([vector_for(f"{d['title']} {d['text']}".strip(), MODEL, 16) for d in corpus])
    rows = []
    for q, text in texts.items():
        scores = docs @ vector_for(text, MODEL, 16)
        top = np.argsort(-scores, kind="stable")[:k]
        rows.append({"query_id": q, "ids": [corpus[i]["_id"] for i in top], "scores": scores[top].tolist()})
    return rows


def _evaluate(tmp_path, run_rows, paths, name) -> dict[str, dict]:
    run = tmp_path / f"{name}.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in run_rows))
    qrels = tmp_path / f"{name}-qrels.tsv"
    wanted = {r["query_id"] for r in run_rows}
    qrels.write_text("\n".join(line for line in paths["qrels.tsv"].read_text().splitlines()
                               if line.startswith("query-id") or line.split("\t")[0] in wanted) + "\n")
    per_query = tmp_path / f"{name}-per-query.jsonl"
    done = CliRunner().invoke(app, ["evaluate", "--run", str(run), "--qrels", str(qrels), "--k", "5", "--pool-depth", "5",
                                    "--metrics", "ra_nwg,nrecall4,recall", "--bootstrap", "0", "--per-query",
                                    str(per_query), "--format", "json"])
    assert done.exit_code == 0, done.output
    return {json.loads(x)["query_id"]: json.loads(x) for x in per_query.read_text().splitlines()}


def test_changes_match_evaluate_on_independently_ranked_runs(tmp_path, monkeypatch):
    paths, corpus, queries = _data(tmp_path)
    with EmbeddingsServer(dim=16) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp_path / "names.json"
        done = CliRunner().invoke(app, ["probe", "names", "--queries", str(paths["queries.jsonl"]), "--corpus",
                                        str(paths["corpus.jsonl"]), "--qrels", str(paths["qrels.tsv"]), "--embedder",
                                        f"openai:{MODEL}", "--k", "5", "--ablations", "mask,gibberish", "--bootstrap", "300",
                                        "--format", "json", "--out", str(out), "--cache-dir", str(tmp_path / "cache")])
        assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    assert [d["query_id"] for d in doc["detected"]] == ["q1", "q2", "q3", "q5"]
    texts = {q["_id"]: q["text"] for q in queries}
    named = {d["query_id"]: texts[d["query_id"]] for d in doc["detected"]}
    before = _evaluate(tmp_path, _numpy_run(named, corpus, 5), paths, "original")
    lists = name_lists("en")
    for impact in doc["impacts"]:
        changed = {q: ablate(t, find_names(t, lists), impact["name"], "en", None) for q, t in named.items()}
        after = _evaluate(tmp_path, _numpy_run(changed, corpus, 5), paths, impact["name"])
        assert impact["changed_queries"] == 4 and impact["unchanged_queries"] == 1
        for metric in ("ra_nwg", "nrecall4", "recall"):
            diffs = [after[q][metric] - before[q][metric] for q in named
                     if after[q][metric] is not None and before[q][metric] is not None]
            assert impact["difference"][metric]["value"] == pytest.approx(np.mean(diffs), abs=1e-12)
            lo, hi = impact["difference"][metric]["ci"]
            assert lo <= impact["difference"][metric]["value"] + 1e-12 <= hi + 2e-12
        drops = {q: (after[q]["ra_nwg"] or 0) - (before[q]["ra_nwg"] or 0) for q in named}
        assert [w["query_id"] for w in impact["worst"]] == sorted((q for q in named if drops[q] < 0),
                                                                   key=lambda q: (drops[q], list(named).index(q)))


@pytest.mark.parametrize("args, message", [
    (["--corpus", "C"], "--queries is missing"),
    (["--queries", "Q", "--corpus", "C", "--qrels", "R", "--lang", "en,fr"], "give one language"),
    (["--queries", "Q", "--corpus", "C", "--qrels", "R", "--ablations", "hard_name_mask"], "the ablations are mask"),
])
def test_bad_options(tmp_path, args, message):
    paths, _, _ = _data(tmp_path)
    args = [a.replace("Q", str(paths["queries.jsonl"])).replace("C", str(paths["corpus.jsonl"]))
            .replace("R", str(paths["qrels.tsv"])) if a in ("Q", "C", "R") else a for a in args]
    done = CliRunner().invoke(app, ["probe", "names", *args, "--cache-dir", str(tmp_path / "cache")])
    assert done.exit_code == 2 and message in done.output


def test_noise_against_qrels_matches_evaluate(tmp_path, monkeypatch):
    """noise --corpus --qrels: per level, the mean over variants of noisy − clean metrics equals the
    same computed here from numpy-ranked runs scored by ``ragdiag evaluate``."""
    from ragdiag.probes.noise import build_noise_texts
    from ragdiag.probes.probe_data import load_queries

    paths, corpus, queries = _data(tmp_path)
    with EmbeddingsServer(dim=16) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp_path / "noise.json"
        done = CliRunner().invoke(app, ["noise", "--queries", str(paths["queries.jsonl"]), "--corpus", str(paths["corpus.jsonl"]),
                                        "--qrels", str(paths["qrels.tsv"]), "--embedder", f"openai:{MODEL}", "--k", "5",
                                        "--levels", "0,3", "--variants", "2", "--seed", "4", "--bootstrap", "200",
                                        "--format", "json", "--out", str(out), "--cache-dir", str(tmp_path / "cache")])
        assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    texts = build_noise_texts("en", load_queries(paths["queries.jsonl"]), [0, 3], 2, 4)
    ids = [q["_id"] for q in queries]
    clean = {q: texts.unique[texts.clean[i]] for i, q in enumerate(ids)}
    before = _evaluate(tmp_path, _numpy_run(clean, corpus, 5), paths, "clean")
    for li, row in enumerate(doc["levels"]):
        per_variant = []
        for v in range(2):
            noisy = {q: texts.unique[texts.noisy[li, i, v]] for i, q in enumerate(ids)}
            per_variant.append(_evaluate(tmp_path, _numpy_run(noisy, corpus, 5), paths, f"l{li}v{v}"))
        impact = row["qrels_impact"]
        assert impact["changed_queries"] == 5
        for metric in ("ra_nwg", "recall"):
            diffs = [np.mean([pv[q][metric] for pv in per_variant]) - before[q][metric] for q in ids]
            assert impact["difference"][metric]["value"] == pytest.approx(np.mean(diffs), abs=1e-12)


def test_noise_qrels_needs_a_corpus(tmp_path):
    paths, _, _ = _data(tmp_path)
    done = CliRunner().invoke(app, ["noise", "--queries", str(paths["queries.jsonl"]), "--qrels", str(paths["qrels.tsv"]),
                                    "--cache-dir", str(tmp_path / "cache")])
    assert done.exit_code == 2 and "--qrels needs --corpus" in done.output


@pytest.mark.parametrize("command", [["probe", "names"], ["noise"]])
def test_qrels_naming_passages_not_in_the_corpus_are_refused(tmp_path, monkeypatch, command):
    """As pipeline --corpus and sweep: one line naming the qrels, the passage and the corpus, before
    any embedding is asked for; nothing written."""
    paths, _, _ = _data(tmp_path)
    with paths["qrels.tsv"].open("a") as handle:
        handle.write("q2\td999\t3\nq3\tx-1\t1\n")
    before = {p: p.read_bytes() for p in paths.values()}
    out = tmp_path / "out.json"
    with EmbeddingsServer(dim=16) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        done = CliRunner().invoke(app, [*command, "--queries", str(paths["queries.jsonl"]), "--corpus",
                                        str(paths["corpus.jsonl"]), "--qrels", str(paths["qrels.tsv"]), "--embedder",
                                        f"openai:{MODEL}", "--k", "5", "--format", "json", "--out", str(out),
                                        "--cache-dir", str(tmp_path / "cache")])
        assert server.texts_embedded == 0
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert (f"qrels {paths['qrels.tsv']}: document 'd999' (judged for query 'q2') is not in {paths['corpus.jsonl']} "
            "(2 judgements name unknown documents)") in done.output
    assert {p: p.read_bytes() for p in paths.values()} == before and not out.exists()
