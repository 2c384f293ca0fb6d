"""``ragdiag sweep`` with the reference-quality gate and --grade-mode logprobs (toy model: test server, not an LLM)."""

from __future__ import annotations

import json

IVF = "ivf:nlist=16,nprobe=1|16"


def _result(out):
    return json.loads((out / "sweep.json").read_text())


def test_sweep_skips_queries_whose_ideal_answer_is_degenerate(workdir, corpus, sweep_cli, servers):
    # a user-extended refusal list that catches the ideal answers built from even-numbered documents
    patterns = workdir / "even.json"
    patterns.write_text(json.dumps({"refusal": {"en": [r"^w\d*[02468]x0\b"]}}))
    relevant = dict(line.split("\t")[:2] for line in (corpus / "qrels" / "test.tsv").read_text().splitlines()[1:])
    even = {q for q, d in relevant.items() if int(d[1:]) % 2 == 0}
    assert 0 < len(even) < len(relevant)
    out = workdir / "gated"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--k", "5", "--bootstrap", "200", "--out-dir", out,
                    "--degenerate-patterns", patterns)
    assert res.exit_code == 0, res.output
    result = _result(out)
    gate = result["meta"]["reference_gate"]
    assert gate["ideal"]["refusal"] == len(even) and gate["patterns"].startswith("degenerate-patterns@v1+even.json")
    assert gate["skipped_contexts"] > 0
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert {r["query"] for r in rows if r["grade"] is None} == even
    contexts = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    skipped = [c for c in contexts if c.get("error", "") and c["error"].startswith("degenerate ideal answer")]
    assert skipped and all(c["sent"] == 0 and c["answer"] is None for c in skipped)  # no call for them
    assert all(c["n_graded"] == len(relevant) - len(even) for c in result["controls"])


def test_sweep_logprob_grades(workdir, corpus, sweep_cli, servers):
    out = workdir / "logprobs"
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--k", "5", "--bootstrap", "200", "--out-dir", out,
                    "--grade-mode", "logprobs")
    assert res.exit_code == 0, res.output
    result = _result(out)
    assert result["meta"]["grade_mode"] == "logprobs" and "grading-logprobs@v1" in result["meta"]["prompts"]
    toy = servers[0]
    assert any(body.get("logprobs") and body.get("max_tokens") == 1 for body in toy.bodies)
    controls = {c["name"]: c for c in result["controls"]}
    assert 4.0 < controls["exact"]["grade_mean"] <= 5.0 and 1.0 <= controls["empty"]["grade_mean"] < 2.0
