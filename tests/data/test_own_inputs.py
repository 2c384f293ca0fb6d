"""A team's own files read as they are (issue 39 §1): corpora, questions, qrels and runs in JSONL,
JSON lists, CSV, TSV, Parquet and plain text, fields found by their common names or named once with
``--fields``; a folder of documents as a corpus; errors that say what a file looks like and which
flag reads it. The frictions of the issue each have a test here that failed before the reader."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels, read_run
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.fields import Reading, parse_fields, reading

runner = CliRunner()
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "own-data-scifact"
DOCS = [("d1", "Cats", "Cats purr and sleep most of the day."),
        ("d2", "Dogs", "Dogs bark at the postman and love long walks."),
        ("007", "Volcanoes", "Lava flows from erupting volcanoes in Iceland.")]


def _write_csv(path: Path, header: list[str], rows: list[tuple], delimiter: str = ",") -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _corpus_files(tmp: Path) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": d, "title": t, "text": x} for d, t, x in DOCS]
    files = {"jsonl": tmp / "c.jsonl", "json": tmp / "c.json", "csv": tmp / "c.csv", "tsv": tmp / "c.tsv",
             "parquet": tmp / "c.parquet"}
    files["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    files["json"].write_text(json.dumps(rows))
    _write_csv(files["csv"], ["id", "title", "text"], DOCS)
    _write_csv(files["tsv"], ["id", "title", "text"], DOCS, "\t")
    pq.write_table(pa.Table.from_pylist(rows), files["parquet"])
    return files


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "tsv", "parquet"])
def test_a_corpus_reads_the_same_in_every_format(fmt, tmp_path):
    ids, texts = load_corpus(_corpus_files(tmp_path)[fmt])
    assert ids == ["d1", "d2", "007"]  # a CSV id keeps its leading zeros
    assert texts[0] == "Cats Cats purr and sleep most of the day."


def test_common_names_and_fields(tmp_path):
    path = _write_csv(tmp_path / "c.csv", ["doc_id", "body"], [("a", "alpha"), ("b", "beta")])
    assert load_corpus(path) == (["a", "b"], ["alpha", "beta"])
    odd = _write_csv(tmp_path / "odd.csv", ["pk", "content_md", "url"], [("a", "alpha", "u"), ("b", "beta", "v")])
    assert load_corpus(odd, reading("id=pk,text=content_md")) == (["a", "b"], ["alpha", "beta"])
    assert load_corpus(odd, reading(id_field="pk", text_field="content_md"))[0] == ["a", "b"]
    with Reading(parse_fields("id=pk,text=content_md")).activate():
        assert load_corpus(odd)[0] == ["a", "b"]


def test_questions_as_csv_parquet_and_plain_text(tmp_path):
    path = _write_csv(tmp_path / "q.csv", ["qid", "question"], [("q1", "why"), ("q2", "how")])
    assert load_queries(path) == (["q1", "q2"], ["why", "how"])
    marco = tmp_path / "queries.tsv"  # MS MARCO's layout: qid<TAB>text, no header
    marco.write_text("1048585\twhat is paula deen's brother\n2\tAndrogen receptor define\n")
    assert load_queries(marco) == (["1048585", "2"], ["what is paula deen's brother", "Androgen receptor define"])
    text = tmp_path / "q.txt"
    text.write_text("first question\n\nsecond question\n")
    assert load_queries(text) == (["1", "3"], ["first question", "second question"])  # ids: line numbers


def test_a_file_of_the_wrong_shape_says_what_it_looks_like_and_the_flag(tmp_path):
    odd = _write_csv(tmp_path / "odd.csv", ["pk", "content_md"], [("a", "alpha")])
    with pytest.raises(DataError, match=r"this looks like CSV with columns pk, content_md: read it with "
                                        r"`--fields id=pk,text=content_md`"):
        load_corpus(odd)
    named_jsonl = _write_csv(tmp_path / "q.jsonl", ["id", "question"], [("1", "why")])
    with pytest.raises(DataError, match=r"this looks like CSV: read it with `--queries-format csv`"):
        load_queries(named_jsonl)
    with pytest.raises(DataError, match=r"no field 'nope' \(named by --text-field nope\)"):
        load_corpus(odd, reading(id_field="pk", text_field="nope"))
    with pytest.raises(RagdiagError, match="disagree"):
        reading("id=pk", id_field="other")
    with pytest.raises(RagdiagError, match="unknown role 'body'"):
        parse_fields("body=text")


def test_duplicate_ids_name_both_records(tmp_path):
    path = _write_csv(tmp_path / "c.csv", ["id", "text"], [("a", "x"), ("a", "y")])
    with pytest.raises(DataError, match=r"line 3: field 'id': duplicate id 'a' \(first at line 2\)"):
        load_corpus(path)


def test_qrels_and_runs_as_tables(tmp_path):
    qrels = _write_csv(tmp_path / "qrels.csv", ["qid", "docid", "label"], [("q1", "d1", "2"), ("q1", "d2", "0")])
    assert read_qrels(qrels) == {"q1": {"d1": 2, "d2": 0}}
    run = _write_csv(tmp_path / "run.csv", ["query_id", "doc_id", "score"], [("q1", "d2", "0.2"), ("q1", "d1", "0.9")])
    assert read_run(run) == {"q1": [("d1", 0.9), ("d2", 0.2)]}
    ranked = _write_csv(tmp_path / "ranked.tsv", ["qid", "pid", "rank"], [("q1", "d2", "2"), ("q1", "d1", "1")], "\t")
    assert [d for d, _ in read_run(ranked)["q1"]] == ["d1", "d2"]
    as_list = tmp_path / "run.json"  # ragdiag's run layout as a JSON list
    as_list.write_text(json.dumps([{"query_id": "q1", "ids": ["d1", "d2"], "scores": [2, 1]}]))
    assert read_run(as_list) == {"q1": [("d1", 2.0), ("d2", 1.0)]}
    trec_tabs = tmp_path / "run.tsv"  # a TREC run with tabs stays a TREC run
    trec_tabs.write_text("q1\tQ0\td1\t1\t0.9\tx\nq1\tQ0\td2\t2\t0.5\tx\n")
    assert read_run(trec_tabs) == {"q1": [("d1", 0.9), ("d2", 0.5)]}
    beir = tmp_path / "qrels.tsv"  # BEIR qrels with their header stay with the layout reader
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert read_qrels(beir) == {"q1": {"d1": 1}}


def _index(tmp_path: Path, corpus: Path, *extra: str):
    return runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "none",
                               "--out-dir", str(tmp_path / "idx"), *extra])


def test_friction_index_build_on_id_title_text_jsonl(tmp_path):
    """Before: ``field '_id': missing or not a scalar``."""
    result = _index(tmp_path, FIXTURE / "corpus.jsonl")
    assert result.exit_code == 0, result.output
    assert "indexed 39 documents" in result.stdout


def test_friction_retrieve_queries_csv(tmp_path):
    """Before: ``malformed JSON on line 1, column 1``."""
    assert _index(tmp_path, FIXTURE / "corpus.jsonl").exit_code == 0
    out = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(FIXTURE / "questions.csv"),
                                 "--mode", "bm25", "--k", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in rows][:3] == ["1", "3", "5"] and len(rows) == 12


def test_friction_json_list_corpus(tmp_path):
    """Before: ``expected a JSON object, got list``."""
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps([{"_id": d, "title": t, "text": x} for d, t, x in DOCS]))
    result = _index(tmp_path, path)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "idx" / "doc_ids.json").read_text()) == ["d1", "d2", "007"]


def test_friction_run_file_given_to_report(tmp_path):
    """Before: ``not valid JSON (unexpected content …)`` and nothing more."""
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "ids": ["d1"], "scores": [1.0]}\n{"query_id": "q2", "ids": ["d2"], "scores": [1.0]}\n')
    result = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert "a run file, an input, not a result" in result.stderr
    assert f"ragdiag evaluate --run {run} --qrels QRELS" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_a_folder_of_documents_is_a_corpus(tmp_path):
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "a.md").write_text("# Title\n\n" + " ".join(f"word{i}" for i in range(30)))
    (folder / "b.html").write_text("<html><head><style>p{}</style></head><body><p>Hello <b>web</b></p>"
                                   "<script>var x</script></body></html>")
    (folder / "c.txt").write_text("plain text")
    (folder / "image.png").write_bytes(b"\x89PNG")
    result = _index(tmp_path, folder, "--chunk-size", "10", "--chunk-overlap", "2")
    assert result.exit_code == 0, result.output
    assert "indexed 3 files as" in result.stdout
    ids = json.loads((tmp_path / "idx" / "doc_ids.json").read_text())
    sources = json.loads((tmp_path / "idx" / "sources.json").read_text())
    assert ids[0] == "b.html#0" and ids[1] == "c.txt#0" and ids[2:] == [f"guide/a.md#{n}" for n in range(len(ids) - 2)]
    assert len(ids) - 2 == 4  # 32 words in windows of 10 with 2 shared: starts 0, 8, 16, 24
    assert sources == ["b.html", "c.txt", *["guide/a.md"] * 4]
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["meta"]["documents"] == {"files": 3, "skipped_files": 1, "chunk_size": 10, "chunk_overlap": 2,
                                             "tokens": "whitespace-separated words"}
    passages = json.loads((tmp_path / "idx" / "passages.json").read_text())
    assert len(passages) == len(ids) and passages[1] == "plain text"  # what triage --index-dir shows
    from ragdiag.data.doc_folder import html_text

    assert html_text((folder / "b.html").read_text()) == "Hello web"
    result = _index(tmp_path, folder, "--chunk-size", "10", "--chunk-overlap", "10")
    assert result.exit_code == 2 and "--chunk-overlap 10 must be smaller than --chunk-size 10" in result.stderr


def test_a_folder_of_documents_is_a_corpus_for_every_command(tmp_path):
    """Before: ``a folder of documents is read by 'ragdiag index build'`` from every other loader. Now
    every loader cuts it as ``index build --embedder none`` does at the same sizes (the same ids)."""
    from ragdiag.io.fields import reading
    from ragdiag.pipeline.corpus_inputs import load_corpus_data, resolve_files
    from ragdiag.probes.noise_retrieval import load_corpus as probe_corpus

    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "a.md").write_text(" ".join(f"word{i}" for i in range(30)))
    (folder / "c.txt").write_text("plain text")
    assert _index(tmp_path, folder, "--chunk-size", "10", "--chunk-overlap", "2").exit_code == 0
    with reading(chunk_size=10, chunk_overlap=2).activate():
        ids, texts = load_corpus(folder)
        assert probe_corpus(folder).ids == ids
    assert ids == json.loads((tmp_path / "idx" / "doc_ids.json").read_text())
    assert texts == json.loads((tmp_path / "idx" / "passages.json").read_text())
    assert load_corpus(folder)[0] == ["c.txt#0", "guide/a.md#0"]  # the default cut: 256 words
    queries, qrels = tmp_path / "q.csv", tmp_path / "qrels.trec"
    queries.write_text("id,question\nq1,word3 word4\n")
    qrels.write_text("q1 0 guide/a.md#0 1\n")
    data = load_corpus_data(folder, queries, qrels)
    assert data.doc_ids == ["c.txt#0", "guide/a.md#0"] and data.relevant == {"q1": ["guide/a.md#0"]}
    with reading(chunk_size=12, chunk_overlap=5).activate():  # what every --corpus command's --chunk-size/--chunk-overlap set
        data = load_corpus_data(folder, queries, qrels)
    assert _index(tmp_path, folder, "--chunk-size", "12", "--chunk-overlap", "5").exit_code == 0
    assert data.doc_ids == json.loads((tmp_path / "idx" / "doc_ids.json").read_text())
    assert data.doc_ids == ["c.txt#0", *[f"guide/a.md#{n}" for n in range(4)]]  # starts 0, 7, 14, 21 of 30 words
    with pytest.raises(RagdiagError, match="a folder of documents needs --queries and --qrels"):
        resolve_files(folder, None, None)


# every command that takes --corpus, with the arguments it needs to reach its reading (no LLM or embedder is called)
CORPUS_COMMANDS = {
    "pipeline": ["pipeline", "--out-dir", "{tmp}/out", "--corpus", "{docs}", "--queries", "{queries}", "--qrels", "{qrels}",
                 "--retriever", "bm25"],
    "sweep": ["sweep", "--corpus", "{docs}", "--queries", "{queries}", "--qrels", "{qrels}", "--index-spec", "Flat",
              "--out-dir", "{tmp}/out"],
    "triage": ["triage", "--corpus", "{docs}"],
    "label": ["label", "--corpus", "{docs}", "--queries", "{queries}", "--out", "{tmp}/labels.tsv"],
    "testset": ["testset", "--corpus", "{docs}", "--out-dir", "{tmp}/testset"],
    "probe names": ["probe", "names", "--queries", "{queries}", "--corpus", "{docs}", "--qrels", "{qrels}"],
    "probe noise": ["probe", "noise", "--corpus", "{docs}"],
    "robustness": ["robustness", "--corpus", "{docs}"],
    "compare": ["compare", "--corpus", "{docs}", "--queries", "{queries}", "--qrels", "{qrels}", "--base-retriever", "bm25",
                "--new-retriever", "bm25:stem", "--sequential"],
    "data inspect": ["data", "inspect", "{qrels}", "--corpus", "{docs}"],
    "index build": ["index", "build", "--corpus", "{docs}", "--embedder", "none", "--out-dir", "{tmp}/idx"],
}


@pytest.mark.parametrize("command", sorted(CORPUS_COMMANDS))
def test_every_corpus_command_takes_the_chunk_options(tmp_path, monkeypatch, command):
    """One declaration of --chunk-size/--chunk-overlap on every command that takes --corpus, checked before any work."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world")
    (tmp_path / "q.csv").write_text("id,question\nq1,hello\n")
    (tmp_path / "qrels.trec").write_text("q1 0 a.txt#0 1\n")
    args = [a.format(tmp=tmp_path, docs=folder, queries=tmp_path / "q.csv", qrels=tmp_path / "qrels.trec")
            for a in CORPUS_COMMANDS[command]]
    result = runner.invoke(app, [*args, "--chunk-size", "10", "--chunk-overlap", "10"])
    assert result.exit_code == 2 and "--chunk-overlap 10 must be smaller than --chunk-size 10" in result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "testset").exists() and not (tmp_path / "idx").exists()
    result = runner.invoke(app, [*args, "--chunk-size", "7"])
    assert result.exit_code == 2 and "--chunk-size: '7' is out of range: must be ≥ 8" in result.stderr, result.stderr


def test_data_inspect_checks_qrels_against_the_folder_cut_at_chunk_size(tmp_path):
    """The passages qrels name exist only at the cut they were made at: --chunk-size/--chunk-overlap reach the reader."""
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "a.md").write_text(" ".join(f"word{i}" for i in range(30)))
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("q1 0 guide/a.md#3 1\n")

    def problems(*extra: str) -> list[str]:
        result = runner.invoke(app, ["data", "inspect", str(qrels), "--corpus", str(folder), "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["problems"]

    assert problems() == ["1 of 1 passages named are not in the corpus (first: guide/a.md#3)"]  # 256 words: one passage
    assert problems("--chunk-size", "10", "--chunk-overlap", "2") == []  # starts 0, 8, 16, 24: guide/a.md#3 exists


def test_a_pdf_is_read_through_pypdf(tmp_path):
    pypdf = pytest.importorskip("pypdf", reason="the 'pdf' extra (pypdf) is not installed")
    from ragdiag.data.doc_folder import read_folder

    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with (tmp_path / "blank.pdf").open("wb") as handle:
        writer.write(handle)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(DataError, match="broken.pdf: not a readable PDF"):
        read_folder(tmp_path)
    (tmp_path / "broken.pdf").unlink()
    assert read_folder(tmp_path).paths == ["blank.pdf"]


def test_data_inspect_reports_kind_fields_problems_and_next_step(tmp_path):
    corpus = _write_csv(tmp_path / "c.csv", ["doc_id", "body", "url"], [("a", "alpha", "u"), ("a", "", "v"), ("b", "b", "w")])
    out = tmp_path / "inspect.json"
    result = runner.invoke(app, ["data", "inspect", str(corpus), "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["kind"] == "corpus" and doc["format"] == "csv" and doc["rows"] == 3
    assert doc["fields_used"] == {"id": "doc_id", "text": "body"} and doc["fields_ignored"] == ["url"]
    assert len(doc["samples"]) == 3
    assert doc["problems"] == ["1 duplicate ids (first: a)", "1 records with an empty or missing text ('body')"]
    assert doc["next_command"].startswith(f"ragdiag index build --corpus {corpus}")
    assert "run_record" in doc
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("q1 0 a 1\nq1 0 zz 1\n")
    result = runner.invoke(app, ["data", "inspect", str(qrels), "--corpus", str(FIXTURE / "corpus.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["kind"] == "qrels" and doc["problems"] == ["2 of 2 passages named are not in the corpus (first: a, zz)"]
    odd = _write_csv(tmp_path / "odd.csv", ["pk", "content_md"], [("a", "alpha")])
    result = runner.invoke(app, ["data", "inspect", str(odd), "--kind", "corpus"])
    assert result.exit_code == 0 and "read it with `--fields id=pk,text=content_md`" in result.stdout
    result = runner.invoke(app, ["data", "inspect", str(odd), "--kind", "corpus", "--fields", "id=pk,text=content_md"])
    assert "problems: none found" in result.stdout and "--fields id=pk,text=content_md --out-dir" in result.stdout
    result = runner.invoke(app, ["data", "inspect", str(FIXTURE / "documents")])
    assert result.exit_code == 0 and "corpus, folder of documents, 39 files" in result.stdout
    result = runner.invoke(app, ["data", "inspect", str(odd), "--kind", "nope"])
    assert result.exit_code == 2 and "--kind nope: expected one of corpus, questions" in result.stderr


def test_evaluate_reads_a_run_table_named_by_flags(tmp_path):
    qrels = FIXTURE / "qrels.trec"
    judged = [line.split() for line in qrels.read_text().splitlines()]
    rows = [(q, d, "0.9") for q, _, d, _ in judged] + [(q, "263364", "0.1") for q in dict.fromkeys(q for q, *_ in judged)]
    run = _write_csv(tmp_path / "scores.csv", ["question", "passage", "sim"], rows)
    base = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--ks", "1", "--metrics", "recall", "--bootstrap", "0",
            "--format", "json"]
    result = runner.invoke(app, base)
    assert result.exit_code == 2 and "read it with `--fields" in result.stderr
    result = runner.invoke(app, [*base, "--fields", "query_id=question,doc_id=passage", "--score-field", "sim"])
    assert result.exit_code == 0, result.output
    (metric,) = json.loads(result.stdout)["runs"][0]["metrics"]
    per_query = {q: sum(r[0] == q for r in judged) for q, *_ in judged}  # relevant passages, all ranked first
    assert metric["metric"] == "recall" and metric["n_defined"] == 12
    assert metric["value"] == pytest.approx(sum(1 / n for n in per_query.values()) / len(per_query))


def test_by_document_reads_passages_as_their_documents(tmp_path):
    from ragdiag.io.fields import document_of

    assert document_of("guide/install.md#3") == "guide/install" and document_of("a.pdf#0") == "a"
    assert document_of("notes#draft") == "notes#draft" and document_of("4983") == "4983"
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"query_id": "q1", "ids": ["b.md#2", "a.md#0", "b.md#0", "c.txt#1"],
                               "scores": [0.9, 0.8, 0.7, 0.1]}) + "\n")
    with reading(by_document=True).activate():
        assert read_run(run) == {"q1": [("b", 0.9), ("a", 0.8), ("c", 0.1)]}
    assert [d for d, _ in read_run(run)["q1"]] == ["b.md#2", "a.md#0", "b.md#0", "c.txt#1"]
