"""``sweep --answers``: grades against dataset reference answers, the gold control, and accuracy per
recall bucket relative to exact k-NN, checked against an independent numpy computation from the
run's own files. Grades come from the toy model test server (word overlap), not from an LLM."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.sweep.synthetic_corpus import write_corpus

IVF = "ivf:nlist=16,nprobe=1|2|4"
HNSW = "hnsw:M=4,efConstruction=8,efSearch=1|2"
WORD = re.compile(r"[a-z0-9]+")


def _relevant(corpus) -> dict[str, str]:
    rows = (corpus / "qrels" / "test.tsv").read_text().splitlines()[1:]
    return {q: d for q, d, _ in (r.split("\t") for r in rows)}


def _first_sentence(doc: str) -> str:
    return " ".join(f"w{doc[1:]}x{j}" for j in range(5))


def write_answers(corpus, path):
    """Per query: its relevant passage's first sentence (q ≡ 0 mod 3), another passage's (q ≡ 1; only
    a context holding that passage scores), or two answers, one half-matching (q ≡ 2). The last query
    has no answer."""
    relevant = _relevant(corpus)
    lines = []
    for j, (q, d) in enumerate(list(relevant.items())[:-1]):
        other = f"d{(int(d[1:]) + 1) % 300}"
        if j % 3 == 0:
            lines.append({"query_id": q, "answer": _first_sentence(d)})
        elif j % 3 == 1:
            lines.append({"_id": q, "answers": [_first_sentence(other)]})
        else:
            half = " ".join(_first_sentence(d).split()[:3])
            lines.append({"query_id": q, "answers": [half, _first_sentence(other), half]})
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return path


def toy_grade(reference: str, candidate: str) -> int:
    """The toy judge recomputed: 1 + min(4, ⌊5·o⌋), o = share of the reference's words in the candidate."""
    ref, cand = set(WORD.findall(reference.lower())), set(WORD.findall(candidate.lower()))
    return 1 + min(4, int(5 * len(ref & cand) / len(ref)))


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def corpus(workdir):
    """20 queries (the other sweep modules use 40): every answer and grade is a toy-model request, and the
    three kinds of answers file line, the unanswered last query and ANN misses all still occur."""
    return write_corpus(workdir / "synthetic", n_queries=20)


@pytest.fixture(scope="module")
def with_answers(workdir, corpus, sweep_cli, servers):
    answers = write_answers(corpus, workdir / "answers.jsonl")
    out = workdir / "sweep-answers"
    before = servers[0].requests
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "300",
                    "--answers", answers, "--out-dir", out, "--plot", "--min-coverage", "0")
    assert res.exit_code == 0, res.output
    return out, res, answers, servers[0].requests - before


def test_grades_are_the_max_over_reference_answers(with_answers, corpus):
    out, _, answers_path, _ = with_answers
    refs = {str(r.get("query_id", r.get("_id"))): r.get("answers") or [r["answer"]] for r in _jsonl(answers_path)}
    result = json.loads((out / "sweep.json").read_text())
    rows = _jsonl(out / "answers.jsonl")
    assert not [r for r in rows if r["kind"] == "ideal"]  # no ideal answer is generated
    contexts = [r for r in rows if r["kind"] == "context"]
    assert contexts and all(r["grade"] is not None for r in contexts)
    for row in contexts:
        usable = list(dict.fromkeys(refs[row["query"]]))
        expected = [toy_grade(ref, row["answer"]) for ref in usable]
        assert row["reference_grades"] == expected and row["grade"] == max(expected)
    n_queries = len(_relevant(corpus)) - 1
    meta = result["meta"]
    assert meta["n_queries"] == n_queries and meta["answers"]["queries_without_answers"] == 1
    assert meta["gold_control_informative"] is True and meta["gold_control_note"] is None
    assert meta["graded_against"].startswith("dataset reference answers") and meta["ideal"].startswith("not generated")


def test_gold_carries_signal_and_controls_have_accuracy(with_answers):
    out, res, _, _ = with_answers
    result = json.loads((out / "sweep.json").read_text())
    per_query = _jsonl(out / "per_query.jsonl")
    controls = {c["name"]: c for c in result["controls"]}
    assert set(controls) == {"exact", "gold", "empty"}
    gold = np.array([r["grade"] for r in per_query if r["point"] == "gold"], dtype=float)
    # queries answered by another passage (q ≡ 1 mod 3) grade 1 on their gold passage: not always 5
    assert gold.min() == 1.0 and gold.max() == 5.0 and controls["gold"]["grade_mean"] == pytest.approx(gold.mean())
    for name, control in controls.items():
        grades = np.array([r["grade"] for r in per_query if r["point"] == name], dtype=float)
        assert control["accuracy"] == pytest.approx(np.mean(grades >= 4))
    assert "gold control left out" not in res.output
    assert "relative to exact k-NN" in res.output and "accuracy (share of grades ≥ 4)" in res.output


def independent_relative(per_query, points, threshold, width=0.1):
    """Loop-and-dict recomputation of every bucket's accuracy, exact accuracy and ratio."""
    exact = {r["query"]: r["grade"] for r in per_query if r["point"] == "exact"}
    sums: dict[int, list[float]] = {}
    for r in per_query:
        if r["point"] not in points or r["grade"] is None or exact[r["query"]] is None:
            continue
        b = 10 if r["recall"] >= 1 else int(np.floor(r["recall"] / width + 1e-9))
        n, a, e = sums.setdefault(b, [0, 0, 0])
        sums[b] = [n + 1, a + (r["grade"] >= threshold), e + (exact[r["query"]] >= threshold)]
    return {b: {"n": n, "accuracy": a / n, "exact": e / n, "relative": a / e if e else None}
            for b, (n, a, e) in sums.items()}


def test_relative_accuracy_matches_an_independent_computation(with_answers):
    out, _, _, _ = with_answers
    result = json.loads((out / "sweep.json").read_text())
    per_query = _jsonl(out / "per_query.jsonl")
    points = {p["label"] for p in result["points"]}
    rel = result["relative_accuracy"]
    assert rel["threshold"] == 4.0 and rel["bucket_width"] == 0.1 and len(rel["buckets"]) == 11
    expected = independent_relative(per_query, points, 4.0)
    assert sum(b["n_pairs"] for b in rel["buckets"]) == sum(v["n"] for v in expected.values())
    for index, bucket in enumerate(rel["buckets"]):
        want = expected.get(index)
        if want is None:
            assert bucket["n_pairs"] == 0 and bucket["accuracy"] is None
            continue
        assert bucket["n_pairs"] == want["n"]
        assert bucket["accuracy"] == pytest.approx(want["accuracy"])
        assert bucket["exact_accuracy"] == pytest.approx(want["exact"])
        assert bucket["relative_to_exact"] == (None if want["relative"] is None else pytest.approx(want["relative"]))
        if bucket["relative_ci"] is not None:
            assert bucket["relative_ci"][0] <= bucket["relative_to_exact"] + 1e-12 <= bucket["relative_ci"][1] + 2e-12
    assert any(b["n_pairs"] for b in rel["buckets"][:10])  # some ANN answers missed passages
    assert (out / "sweep_accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calls_one_grade_per_reference_and_a_warm_rerun_sends_nothing(with_answers, workdir, corpus, sweep_cli,
                                                                     servers):
    out, _, answers, sent = with_answers
    rows = _jsonl(out / "answers.jsonl")
    contexts = [r for r in rows if r["kind"] == "context"]
    assert sum(r["sent"] for r in contexts) == sent  # answers + one grade per distinct reference, nothing else
    assert sent == len(contexts) + sum(len(r["reference_grades"]) for r in contexts)
    before = servers[0].requests
    again = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "300",
                      "--answers", answers, "--out-dir", workdir / "again-answers", "--max-calls", "0")
    assert again.exit_code == 0, again.output
    assert servers[0].requests == before
    first, second = (json.loads((d / "sweep.json").read_text()) for d in (out, workdir / "again-answers"))
    assert first["relative_accuracy"] == second["relative_accuracy"]


def test_without_answers_the_gold_control_is_left_out_and_said_so(tmp_path, corpus, sweep_cli):
    out = tmp_path / "plain"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--k", "5", "--bootstrap", "200", "--max-queries", "12",
                    "--accuracy-threshold", "5", "--out-dir", out)
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if "gold control left out" in line]
    assert len(notes) == 1 and notes[0].startswith("ragdiag: note: ")
    result = json.loads((out / "sweep.json").read_text())
    assert [c["name"] for c in result["controls"]] == ["exact", "empty"]
    assert result["meta"]["gold_control_informative"] is False and "always grades 5" in result["meta"]["gold_control_note"]
    assert result["relative_accuracy"]["threshold"] == 5.0 and result["meta"]["answers"] is None
    assert "gold" not in {r["point"] for r in _jsonl(out / "per_query.jsonl")}


def _error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), res.output
    return lines[0]


@pytest.mark.parametrize("content, expected", [
    ('{"query_id": "q0", "answer": "x"}\n{"query_id": "q0", "answer": "y"}\n', "line 2: query 'q0' already has answers (line 1)"),
    ('{"answer": "x"}\n', "line 1: no 'query_id' (or '_id') field"),
    ('{"query_id": "q0", "answers": []}\n', "line 1: field 'answers' must be a non-empty list of strings"),
    ('{"query_id": "q0", "answer": "x", "answers": ["y"]}\n', "line 1: give exactly one of 'answer'"),
    ('{"query_id": "q0", "answer": "  "}\n', "line 1: field 'answer' holds an empty or non-string answer"),
    ('{"query_id": "nope", "answer": "x"}\n', "no query of"),
    ('{"query_id": "q0", "answer": "x"\n', "malformed JSON on line 1"),
])
def test_bad_answers_file_is_refused_before_any_call(tmp_path, corpus, sweep_cli, servers, content, expected):
    path = tmp_path / "answers.jsonl"
    path.write_text(content)
    before = (servers[0].requests, servers[1].requests)
    line = _error_line(sweep_cli("--corpus", corpus, "--index", IVF, "--answers", path, "--out-dir", tmp_path / "o"))
    assert expected in line
    assert (servers[0].requests, servers[1].requests) == before and not (tmp_path / "o" / "sweep.json").exists()


@pytest.mark.parametrize("value", ["0.5", "5.5", "nan"])
def test_accuracy_threshold_range(tmp_path, corpus, sweep_cli, value):
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--accuracy-threshold", value, "--out-dir", tmp_path / "o")
    assert res.exit_code == 2 and "--accuracy-threshold" in res.output


def test_max_calls_counts_one_grade_per_reference_before_any_call(with_answers, tmp_path, corpus, sweep_cli, servers):
    _, _, answers, sent = with_answers
    before = servers[0].requests
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--index", HNSW, "--k", "5", "--bootstrap", "300",
                    "--answers", answers, "--out-dir", tmp_path / "o", "--max-calls", "0",
                    cache_dir=tmp_path / "fresh-cache")
    line = _error_line(res)
    assert f"this run needs {sent} new LLM calls (0 ideal answers" in line  # the cold run above sent exactly that
    assert servers[0].requests == before


def test_reference_gate_drops_degenerate_references():
    from ragdiag.answers.contexts import AnswerJob
    from ragdiag.answers.judging import GradingOptions

    refs = {"q1": ["I don't know.", "x is a letter"], "q2": ["I don't know."]}
    job = AnswerJob({"q1": "what is x", "q2": "what is y"}, str, {}, [], references=refs)
    job.gate_references()
    assert job.reference_answers("q1") == ["x is a letter"] and job.reference_answers("q2") == []
    assert job.skipped_for("q2") == "degenerate reference answer (refusal)" and job.skipped_for("q1") is None
    job.grading = GradingOptions(keep_degenerate=True)
    job.gate_references()
    assert job.reference_answers("q2") == ["I don't know."] and job.skipped_for("q2") is None
