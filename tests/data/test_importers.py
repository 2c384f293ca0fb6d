"""``ragdiag import ragas|deepeval``: evaluation datasets into texts, ranked, answers and graded files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.importers import convert
from ragdiag.errors import DataError

runner = CliRunner()

RAGAS = {
    "question": "Where is the Eiffel tower?",
    "contexts": ["Paris has many bridges.", "The Eiffel tower is in  Paris.", "Lyon is a city."],
    "answer": "In Paris.",
    "ground_truth": "It stands in Paris, France.",
    "reference_contexts": ["The Eiffel tower is in Paris.", "It was built in 1889 in Paris."],
    "answer_correctness": 0.75,
}


def test_ragas_record_becomes_texts_ranked_answers_graded():
    out = convert([RAGAS], "ragas", "r.json", system="bm25", score_col="answer_correctness")
    texts, ranked, graded = out.texts[0], out.ranked[0], out.graded[0]
    assert texts["id"] == "U-q1" and texts["q"] == RAGAS["question"]
    assert texts["p"] == RAGAS["reference_contexts"]
    assert texts["n"] == ["Paris has many bridges.", "Lyon is a city."]
    # retrieved: negative 0 (index 2), positive 0 (whitespace differs), negative 1 (index 3); then the unretrieved positive 1
    assert ranked == {"id": "U-q1", "E": "bm25", "Nc": 4, "Np": 2, "K": [3], "P": [1 / 3], "R": [1 / 2],
                      "rank": [2, 0, 3, 1]}
    assert graded["inK"] == [0, 1, 0] and graded["K"] == 3 and graded["grade"] == 4.0  # 1 + 4·0.75
    assert graded["answer_ideal"] == RAGAS["ground_truth"] and graded["answer_topK"] == "In Paris."
    ideal, topk = out.answers
    assert ideal == {"kind": "ideal", "id": "U-q1", "q": RAGAS["question"], "answer": RAGAS["ground_truth"]}
    assert topk["kind"] == "topK" and topk["answer"] == "In Paris." and topk["rank"] == [2, 0, 3]


def test_deepeval_names_and_one_to_five_scores():
    record = {"input": "q?", "actual_output": "a", "expected_output": "b", "retrieval_context": ["x", "y"],
              "context": ["y"], "score": 4, "id": "case-7"}
    out = convert([record], "deepeval", "d.json", score_col="score")
    assert out.graded[0]["id"] == "U-case-7" and out.graded[0]["grade"] == 4.0
    assert out.graded[0]["inK"] == [0, 1]


def test_schema_error_lists_the_required_fields():
    with pytest.raises(DataError) as err:
        convert([{"question": "q", "answer": "a"}], "ragas", "r.json")
    text = str(err.value)
    assert "r.json: record 1: field 'retrieved_contexts': missing" in text
    for name in ("user_input or question", "retrieved_contexts or contexts", "response or answer",
                 "reference or ground_truth", "reference_contexts"):
        assert name in text
    with pytest.raises(DataError, match="7 does not fit the 1-5 scale"):
        convert([{**RAGAS, "answer_correctness": 7}], "ragas", "r.json", score_col="answer_correctness")


def test_cli_import_then_correlate(tmp_path):
    records = []
    for i in range(40):
        hits = i % 4
        relevant = [f"relevant {i}-{j}" for j in range(3)]
        retrieved = relevant[:hits] + [f"other {i}-{j}" for j in range(4 - hits)]
        records.append({"user_input": f"q{i}", "retrieved_contexts": retrieved, "response": f"a{i}",
                        "reference": f"r{i}", "reference_contexts": relevant, "score": hits / 3})
    src = tmp_path / "ragas.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "imported"
    result = runner.invoke(app, ["import", "ragas", str(src), "--out", str(out), "--system", "mine"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["answers.jsonl", "graded.json", "import.manifest.json",
                                                     "ranked.json", "texts.json"]
    assert json.loads((out / "import.manifest.json").read_text())["run_record"]["command"] == "ragdiag import ragas"
    result = runner.invoke(app, ["correlate", "--graded", str(out / "graded.json"), "--segments", "pooled",
                                 "--min-samples", "10", "--alpha-grid", "l30^0.8", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    recall = next(r for r in report["results"] if r["measure"] == "F")
    assert recall["segment"] == "mine^U" and recall["n"] == 40
    assert recall["spearman"]["value"] == pytest.approx(1.0)  # grade = 1 + 4·hits/3, F grows with hits at fixed K, Np


def test_ragas_csv_with_python_list_cells(tmp_path):
    import csv

    from ragdiag.data.importers import read_records

    path = tmp_path / "ragas.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["user_input", "retrieved_contexts", "response", "reference", "reference_contexts"])
        writer.writerow(["q?", str(["it's a", "b"]), "a", "r", '["b"]'])  # pandas writes Python reprs
    (record,) = read_records(path)
    assert record["retrieved_contexts"] == ["it's a", "b"] and record["reference_contexts"] == ["b"]
    out = convert([record], "ragas", str(path))
    assert out.ranked[0]["rank"] == [1, 0] and out.texts[0]["n"] == ["it's a"]


# ---------------------------------------------------------------- issue 18: one scale per file, empty datasets


def _scored(scores: list) -> list[dict]:
    return [{**RAGAS, "id": f"q{i}", "answer_correctness": s} for i, s in enumerate(scores)]


def test_score_scale_is_decided_once_per_file():
    one_to_five = convert(_scored([1, 2, 4, 5]), "ragas", "r.json", score_col="answer_correctness")
    assert [g["grade"] for g in one_to_five.graded] == [1, 2, 4, 5] and one_to_five.score_scale == "1-5"
    zero_to_one = convert(_scored([0, 0.5, 1]), "ragas", "r.json", score_col="answer_correctness")
    assert [g["grade"] for g in zero_to_one.graded] == [1, 3, 5] and zero_to_one.score_scale == "0-1"
    forced = convert(_scored([1, 1, 1]), "ragas", "r.json", score_col="answer_correctness", scale="1-5")
    assert [g["grade"] for g in forced.graded] == [1, 1, 1]


@pytest.mark.parametrize("scores, scale, needle", [
    ([0.5, 3], None, "record 1: field 'answer_correctness': 0.5 does not fit the 1-5 scale"),
    ([1, 7], None, "record 2: field 'answer_correctness': 7 does not fit the 1-5 scale"),
    ([0.2, 2], "0-1", "record 2: field 'answer_correctness': 2 does not fit the 0-1 scale (given with --score-scale)"),
    ([-0.1, 0.5], None, "record 1: field 'answer_correctness': -0.1 does not fit the 0-1 scale"),
    ([True, 0.5], None, "record 1: field 'answer_correctness': not a number: True"),
    (["inf", 0.5], None, "record 1: field 'answer_correctness': inf is not a finite score"),
])
def test_a_column_that_fits_no_scale_is_refused_naming_the_record(scores, scale, needle):
    with pytest.raises(DataError) as err:
        convert(_scored(scores), "ragas", "r.json", score_col="answer_correctness", scale=scale)
    assert needle in str(err.value)


@pytest.mark.parametrize("tool", ["ragas", "deepeval"])
@pytest.mark.parametrize("content, name", [("[]", "empty.json"), ("", "empty.jsonl"), ('{"test_cases": []}', "cases.json"),
                                           ("question,contexts,answer\n", "header.csv")])
def test_cli_refuses_an_empty_dataset_and_writes_nothing(tmp_path, tool, content, name):
    src = tmp_path / name
    src.write_text(content)
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", tool, str(src), "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"ragdiag: error: {src}: no records (an empty {tool} dataset)")
    assert not out.exists()


def test_cli_score_scale_option_and_what_it_says(tmp_path):
    src = tmp_path / "ragas.json"
    src.write_text(json.dumps(_scored([1, 2, 4, 5])))
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "ragas", str(src), "--out", str(out), "--score-col", "answer_correctness"])
    assert result.exit_code == 0, result.output
    assert "score column 'answer_correctness' read as 1-5 (a score above 1): grades kept" in result.stderr
    assert [r["grade"] for r in json.loads((out / "graded.json").read_text())] == [1, 2, 4, 5]
    manifest = json.loads((out / "import.manifest.json").read_text())
    assert manifest["meta"]["score_scale"] == "1-5"
    bad = runner.invoke(app, ["import", "ragas", str(src), "--out", str(tmp_path / "o2"),
                              "--score-col", "answer_correctness", "--score-scale", "0-1"])
    assert bad.exit_code == 2 and "record 2: field 'answer_correctness': 2 does not fit the 0-1 scale" in bad.stderr
    assert not (tmp_path / "o2").exists()
    wrong = runner.invoke(app, ["import", "ragas", str(src), "--out", str(tmp_path / "o3"), "--score-scale", "0-10"])
    assert wrong.exit_code == 2 and "--score-scale must be one of 0-1, 1-5, got '0-10'" in wrong.stderr


def test_a_ragas_csv_with_an_answer_over_128_kib_imports(tmp_path):
    """Python's csv module stops at 131072 characters a cell; a long answer is realistic (issue 18)."""
    answer = "long answer " * 20_000  # 240 kB
    src = tmp_path / "ragas.csv"
    src.write_text('user_input,retrieved_contexts,response,reference,reference_contexts\n'
                   f'"q?","[\'a\', \'b\']","{answer}","r","[\'b\']"\n')
    result = runner.invoke(app, ["import", "ragas", str(src), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "out" / "answers.jsonl").read_text().splitlines()]
    assert rows[-1]["answer"] == answer
