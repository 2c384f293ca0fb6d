"""``ragdiag testset`` end to end against the local chat test server (its questions and verdicts are
computed by the server, never an LLM's): each filter removes ≥ 95% of the faults it targets and ≤ 5%
of clean items; the output is a BEIR folder that evaluate reads; a rerun is free (cache); the cost is
printed before any call; --max-calls is a hard cap; bad input is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.testset.passages import sample_passages
from tests.servers.chat_server import ChatServer
from tests.servers.embeddings_server import EmbeddingsServer

runner = CliRunner()
DOCS = 160
FAULTS = {"copy": 12, "unanswerable": 12, "duplicate": 12, "language": 12, "not-json": 4, "no-question": 4}
TARGET = {"copy": "copy", "unanswerable": "answerable", "duplicate": "dedupe", "language": "language"}
FILLER = ["the", "of", "and", "in", "to", "a", "is", "was", "for", "on", "with", "by", "as", "at", "from", "are", "this", "that", "be", "it", "an", "or"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(4, 6)))


def write_corpus(folder: Path, seed: int = 0, shared: bool = False) -> tuple[Path, list[tuple[str, str]]]:
    """DOCS documents of 40–70 words: short filler words and eight long words found in no other document
    (``shared``: documents 2k and 2k + 1 share their first long word, so BM25 pools hold both)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    docs = []
    for i in range(DOCS):
        own = []
        while len(own) < 8:
            w = _word(rng)
            if w not in seen:
                seen.add(w)
                own.append(w)
        if shared and i % 2:
            own[0] = docs[-1][1].split("|")[0]
        words = [rng.choice(FILLER) for _ in range(rng.randint(32, 62))]
        for j, w in enumerate(own):
            words.insert(rng.randint(0, len(words)), w if j else w.capitalize())
        docs.append((f"doc{i:03d}", own[0] + "|" + " ".join(words) + "."))
    docs = [(d, t.split("|", 1)[1]) for d, t in docs]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs))
    return path, docs


def _faults(server: ChatServer, docs: list[tuple[str, str]], n: int, seed: int) -> dict[str, str]:
    """Fault kinds on passages of the sample (a duplicate copies an earlier sampled passage's question)."""
    ids, texts = [d for d, _ in docs], [t for _, t in docs]
    order = [p.doc_id for p in sample_passages(ids, texts, n, 1, 30, 300, seed, "en", ["question"], "corpus")]
    text = dict(docs)
    kinds = [k for k, count in FAULTS.items() for _ in range(count)]
    chosen = order[len(order) - len(kinds):]  # the last sampled: a duplicate's original comes earlier
    fault_of = {}
    for i, (doc, kind) in enumerate(zip(chosen, kinds, strict=True)):
        other = text[order[i]] if kind == "duplicate" else None
        server.testset_fault(" ".join(text[doc].split()[:6]), kind, other)
        fault_of[doc] = kind
    return fault_of


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    corpus, docs = write_corpus(tmp_path / "data")
    return tmp_path, corpus, docs


def _run(server: ChatServer, corpus: Path, out: Path, cache: Path, *extra: str):
    return runner.invoke(app, ["testset", "--corpus", str(corpus), "--model", "test-model", "--base-url",
                               server.base_url, "--cache-dir", str(cache), "--no-progress", "--out-dir", str(out), *extra])


def test_each_filter_removes_its_faults_and_spares_clean_items(env):
    tmp, corpus, docs = env
    with ChatServer() as server:
        fault_of = _faults(server, docs, DOCS, 0)
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", str(DOCS))
        assert result.exit_code == 0, result.output
        sent = server.completed
        rerun = _run(server, corpus, tmp / "ts2", tmp / "cache", "--n", str(DOCS))
        assert rerun.exit_code == 0 and server.completed == sent, "a rerun is answered from the cache"
    assert "cost before any call" in result.output
    rows = [json.loads(line) for line in (tmp / "ts" / "candidates.jsonl").read_text().splitlines()]
    assert len(rows) == DOCS
    by_doc = {r["doc_id"]: r for r in rows}
    clean = [r for d, r in by_doc.items() if d not in fault_of]
    for kind, target in TARGET.items():
        faulty = [by_doc[d] for d, k in fault_of.items() if k == kind]
        caught = sum(target in r["dropped_by"] for r in faulty) / len(faulty)
        spared = sum(target in r["dropped_by"] for r in clean) / len(clean)
        assert caught >= 0.95 and spared <= 0.05, (kind, target, caught, spared)
    for kind in ("not-json", "no-question"):
        assert all(by_doc[d]["problem"] for d, k in fault_of.items() if k == kind)
    for target in ("consistency",):
        assert sum(target in r["dropped_by"] for r in clean) / len(clean) <= 0.05
    assert sum(r["kept"] for r in clean) >= 0.95 * len(clean)
    manifest = json.loads((tmp / "ts" / "manifest.json").read_text())
    assert manifest["counts"]["sampled"] == DOCS and manifest["unusable"]["count"] == 8
    assert manifest["filters"]["copy"]["flagged"] >= 12 and manifest["filters"]["copy"]["examples"]
    assert manifest["prompts"]["testset-question"] == "testset-question@v1"
    assert manifest["calls"]["plan"]["questions"] == DOCS
    queries = [json.loads(line) for line in (tmp / "ts" / "queries.jsonl").read_text().splitlines()]
    assert len(queries) == manifest["counts"]["kept"] and all(q["metadata"]["source_doc"] in by_doc for q in queries)
    answers = [json.loads(line) for line in (tmp / "ts" / "answers.jsonl").read_text().splitlines()]
    assert [a["query_id"] for a in answers] == [q["_id"] for q in queries]
    assert (tmp / "ts" / "corpus.jsonl").read_bytes() == corpus.read_bytes()


def test_output_reads_back_into_evaluate_and_index(env):
    tmp, corpus, docs = env
    with ChatServer() as server:
        assert _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "40").exit_code == 0
    folder = tmp / "ts"
    from ragdiag.data.beir import load_corpus, load_queries
    from ragdiag.data.reference_answers import load_reference_answers
    from ragdiag.evaluate.inputs import load_graded_qrels

    ids, _ = load_queries(folder / "queries.jsonl")
    qrels = load_graded_qrels(folder / "qrels" / "test.tsv")
    assert set(qrels.query_ids) == set(ids) and len(load_corpus(folder)[0]) == DOCS
    assert set(load_reference_answers(folder / "answers.jsonl")) == set(ids)
    run = tmp / "run.jsonl"
    run.write_text("".join(json.dumps({"query_id": q, "ids": [next(iter(qrels.grades[q]))], "scores": [1.0]}) + "\n"
                           for q in ids))
    result = runner.invoke(app, ["evaluate", "--run", str(run), "--qrels", str(folder / "qrels" / "test.tsv"),
                                 "--bootstrap", "0", "--format", "json"])
    assert result.exit_code == 0, result.output


def test_max_calls_is_a_hard_cap_and_the_run_resumes(env):
    tmp, corpus, docs = env
    with ChatServer() as server:
        refused = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "20", "--max-calls", "10")
        assert refused.exit_code == 2 and "--max-calls 10" in refused.output and server.completed == 0
        assert not (tmp / "ts").exists() or not any((tmp / "ts").iterdir())
        stopped = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "20", "--max-calls", "25")
        assert stopped.exit_code == 2 and "answerable judgements" in stopped.output and server.completed == 20
        done = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "20", "--max-calls", "20")
        assert done.exit_code == 0, done.output
        assert server.completed <= 40, "the questions were not paid twice"


@pytest.mark.parametrize(("args", "message"), [
    (["--n", "999"], "--n 999 is larger than the passages available"),
    (["--min-words", "500", "--max-words", "600"], "every passage is shorter than --min-words 500"),
    (["--kinds", "riddle"], "unknown query kind 'riddle'"),
    (["--filters", "consistency,magic"], "unknown filter 'magic'"),
    (["--min-words", "50", "--max-words", "40"], "--max-words 40 is below --min-words 50"),
])
def test_bad_input_one_line_exit_2_nothing_sent(env, args, message):
    tmp, corpus, docs = env
    with ChatServer() as server:
        result = _run(server, corpus, tmp / "ts", tmp / "cache", *args)
        assert result.exit_code == 2 and message in result.output, result.output
        assert server.completed == 0 and not (tmp / "ts" / "manifest.json").exists()


def test_empty_corpus_and_unusable_replies(env):
    tmp, corpus, docs = env
    empty = tmp / "empty.jsonl"
    empty.write_text("")
    with ChatServer() as server:
        result = _run(server, empty, tmp / "ts", tmp / "cache")
        assert result.exit_code == 2 and "empty" in result.output and server.completed == 0
        server.testset_fault(" ", "not-json")
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "5")
        assert result.exit_code == 2 and "no usable reply" in result.output
        assert not (tmp / "ts" / "queries.jsonl").exists()


def test_examples_file_is_checked(env):
    tmp, corpus, docs = env
    bad = tmp / "examples.jsonl"
    bad.write_text('{"passage": "p", "question": ""}\n')
    with ChatServer() as server:
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--examples", str(bad))
        assert result.exit_code == 2 and "line 1: field 'question'" in result.output and server.completed == 0
        good = tmp / "good.jsonl"
        good.write_text(json.dumps({"passage": "Bees dance.", "question": "How do bees talk?", "answer": "By dancing."}) + "\n")
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--examples", str(good), "--n", "5")
        assert result.exit_code == 0, result.output
        assert any("How do bees talk?" in json.dumps(b) for b in server.bodies)


def test_label_pool_grades_other_passages(env):
    tmp = env[0]
    corpus, _ = write_corpus(tmp / "shared", shared=True)
    with ChatServer() as server:
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "12", "--label-pool", "3", "--pool", "bm25")
        assert result.exit_code == 0, result.output
    manifest = json.loads((tmp / "ts" / "manifest.json").read_text())
    assert manifest["prompts"]["utility-label"] == "utility-label@v1" and manifest["calls"]["new_by_phase"]["label"] > 0
    queries = {json.loads(line)["_id"]: json.loads(line)["metadata"]["source_doc"]
               for line in (tmp / "ts" / "queries.jsonl").read_text().splitlines()}
    lines = [line.split("\t") for line in (tmp / "ts" / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    assert all(1 <= int(g) <= 5 for _, _, g in lines)
    assert {(q, d) for q, d, g in lines if g == "5"} >= set(queries.items())
    assert len(lines) > len(queries), "other pooled passages are graded too"


def test_french_passages_get_french_prompts_and_questions(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "fr-sample"
    with ChatServer() as server:
        result = _run(server, fixture, tmp_path / "ts", tmp_path / "cache", "--n", "10")
        assert result.exit_code == 0, result.output
        assert any("en français" in json.dumps(b, ensure_ascii=False) for b in server.bodies)
    manifest = json.loads((tmp_path / "ts" / "manifest.json").read_text())
    assert "testset-question-fr" in manifest["prompts"] and manifest["filters"]["language"]["flagged"] == 0
    queries = [json.loads(line) for line in (tmp_path / "ts" / "queries.jsonl").read_text().splitlines()]
    assert queries and all(q["metadata"]["lang"] == "fr" and q["text"].startswith("Quels") for q in queries)


@pytest.fixture()
def embeddings(monkeypatch):
    """The embeddings test server as $OPENAI_BASE_URL (the chat server comes by --base-url): an API
    embedder through the real openai client, no model to load (what the filters do with the vectors
    does not depend on which model made them)."""
    with EmbeddingsServer(dim=32) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


@pytest.mark.slow
def test_consistency_with_a_dense_index(env, embeddings):
    tmp, corpus, docs = env
    index = tmp / "index"
    built = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--out-dir", str(index), "--embedder",
                                "openai:test-embed", "--cache-dir", str(tmp / "cache")])
    assert built.exit_code == 0, built.output
    with ChatServer() as server:
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "30", "--filters", "consistency",
                      "--consistency-index", str(index))
        assert result.exit_code == 0, result.output
        other = tmp / "other.jsonl"
        other.write_text(json.dumps({"_id": "x", "text": "a lone document"}) + "\n")
        refused = _run(server, other, tmp / "ts2", tmp / "cache", "--n", "1", "--min-words", "1",
                       "--consistency-index", str(index))
        assert refused.exit_code == 2 and "built over other documents" in refused.output
    manifest = json.loads((tmp / "ts" / "manifest.json").read_text())
    assert manifest["meta"]["consistency_retriever"] == f"dense index {index}"
    assert manifest["filters"]["consistency"]["examined"] == 30
    assert embeddings.texts_embedded >= DOCS + 30  # the corpus, then the questions


@pytest.mark.slow
def test_dedupe_with_embeddings(env, embeddings):
    tmp, corpus, docs = env
    with ChatServer() as server:
        refused = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "20", "--dedupe-embedder", "nope:x")
        assert refused.exit_code == 2 and server.completed == 0, refused.output
        ids, texts = [d for d, _ in docs], [t for _, t in docs]
        order = [p.doc_id for p in sample_passages(ids, texts, 20, 1, 30, 300, 0, "en", ["question"], "corpus")]
        text = dict(docs)
        for doc in order[15:]:
            server.testset_fault(" ".join(text[doc].split()[:6]), "duplicate", text[order[0]])
        result = _run(server, corpus, tmp / "ts", tmp / "cache", "--n", "20", "--filters", "dedupe",
                      "--dedupe-embedder", "openai:test-embed")
        assert result.exit_code == 0, result.output
    manifest = json.loads((tmp / "ts" / "manifest.json").read_text())
    assert manifest["meta"]["dedupe_similarity"] == "embedding cosine (openai:test-embed)" and embeddings.texts_embedded
    rows = {json.loads(line)["doc_id"]: json.loads(line) for line in (tmp / "ts" / "candidates.jsonl").read_text().splitlines()}
    assert all("dedupe" in rows[d]["dropped_by"] for d in order[15:])
    assert sum("dedupe" in rows[d]["dropped_by"] for d in order[:15]) <= 1
