"""``ragdiag triage`` under hostile inputs (issue 44): outputs checked before the first paid call, judge
replies that held no grade asked again on a rerun, paid calls attributed by query id (not by parsing a
display label), TREC-valid utility qrels, and a default depth that fits a small corpus. Against the
fault-model test server (test-server replies, never an LLM's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer, load_model

FIXTURE = resource_path("fixtures", "triage-synthetic")


class NanJudgeServer(FaultServer):
    """The fault model, whose judge replies ``{"grade": NaN}`` while ``nan_judge`` is set."""

    nan_judge = False

    def _text(self, body: dict[str, Any]) -> str:
        text = super()._text(body)
        return '{"grade": NaN}' if self.nan_judge and text.startswith('{"grade"') else text


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "test")
        patch.delenv("OPENAI_BASE_URL", raising=False)
        with NanJudgeServer(load_model(FIXTURE / "model.json")) as fault:
            yield fault


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURE / name).read_text().splitlines() if line.strip()]


def corpus(folder: Path, numbers: list[int], rename=lambda i: i, extra_docs: int = 0) -> Path:
    """A BEIR folder with the fixture's queries ``numbers`` (ids through ``rename``), their passages and
    ``extra_docs`` passages of other queries; answers.jsonl beside it."""
    wanted = {f"q{n:03d}" for n in numbers}
    folder.mkdir(parents=True)
    docs = [d for d in _lines("corpus.jsonl") if d["_id"].split("-")[0] in wanted]
    docs += [d for d in _lines("corpus.jsonl") if d["_id"].split("-")[0] not in wanted][:extra_docs]
    (folder / "corpus.jsonl").write_text("".join(json.dumps({**d, "_id": rename(d["_id"])}) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text("".join(json.dumps({**q, "_id": rename(q["_id"])}) + "\n"
                                                  for q in _lines("queries.jsonl") if q["_id"] in wanted))
    (folder / "answers.jsonl").write_text("".join(json.dumps({**a, "query_id": rename(a["query_id"])}) + "\n"
                                                  for a in _lines("answers.jsonl") if a["query_id"] in wanted))
    (folder / "qrels").mkdir()
    rows = [line.split("\t") for line in (FIXTURE / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{rename(q)}\t{rename(d)}\t{s}\n" for q, d, s in rows if q in wanted))
    return folder


def triage(server: FaultServer, folder: Path, out: Path, cache: Path, *args: Any):
    full = ["triage", "--corpus", str(folder), "--answers", str(folder / "answers.jsonl"), "--model", "test-model",
            "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir", str(cache), "--workers", "4",
            "--no-progress", "--bootstrap", "50", "--max-retries", "0", *map(str, args)]
    return CliRunner().invoke(app, full)


def one_line_error(res, server: FaultServer, before: int) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert lines[-1].startswith("ragdiag: error: ") and "Traceback" not in res.output, res.output
    assert server.requests == before  # nothing paid
    return lines[-1]


def test_an_output_that_is_a_folder_is_refused_before_any_call(server, tmp_path):
    folder = corpus(tmp_path / "set", [151, 152])
    out = tmp_path / "out"
    (out / "per_query.jsonl").mkdir(parents=True)
    before = server.requests
    line = one_line_error(triage(server, folder, out, tmp_path / "c"), server, before)
    assert "per_query.jsonl" in line and "is a directory" in line
    assert sorted(p.name for p in out.iterdir()) == ["per_query.jsonl"]  # nothing written


def test_judge_replies_without_a_grade_are_asked_again_on_a_rerun(server, tmp_path):
    folder = corpus(tmp_path / "set", [151, 152])
    cache = tmp_path / "c"
    server.nan_judge = True
    try:
        first = triage(server, folder, tmp_path / "first", cache)
    finally:
        server.nan_judge = False
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in (tmp_path / "first" / "per_query.jsonl").read_text().splitlines()]
    assert all(r.get("left_out", "").startswith("baseline not graded") for r in rows)
    before = server.requests
    again = triage(server, folder, tmp_path / "again", cache)
    assert again.exit_code == 0, again.output
    assert server.requests > before  # the cached no-grade replies were asked again, as grade does
    result = json.loads((tmp_path / "again" / "triage.json").read_text())
    assert not result["left_out"]
    assert {q["id"]: q["cause"] for q in result["queries"]} == {"q151": "ranking", "q152": "ranking"}
    assert result["calls"]["paid"] == server.requests - before
    assert result["cost"]["worst_case_calls"] >= result["calls"]["paid"]  # the re-asks were costed up front


def test_calls_are_attributed_by_query_id_whatever_the_id_holds(server, tmp_path):
    def rename(i: str) -> str:
        return i.replace("q", "q E=sweep x docs=1 ", 1) if i.startswith("q") and "-" not in i else i

    folder = corpus(tmp_path / "set", [151, 152, 241], rename)
    res = triage(server, folder, tmp_path / "out", tmp_path / "c")
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "out" / "triage.json").read_text())
    assert [q["id"] for q in result["queries"]] == [rename(f"q{n}") for n in (151, 152, 241)]
    assert result["calls"]["paid"] > 0
    assert sum(q["calls"] for q in result["queries"]) == result["calls"]["paid_triaged"] == result["calls"]["paid"]


def test_utility_qrels_refuse_ids_that_are_not_trec_before_any_call(server, tmp_path):
    folder = corpus(tmp_path / "set", [151], lambda i: i.replace("-", " "))
    before = server.requests
    line = one_line_error(triage(server, folder, tmp_path / "out", tmp_path / "c", "--interventions",
                                 "inject,single-passage"), server, before)
    assert "utility-qrels.tsv" in line and "'q151 d01'" in line and "single-passage" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_default_depth_fits_a_small_corpus_and_a_given_one_is_checked(server, tmp_path):
    folder = corpus(tmp_path / "set", [151], extra_docs=2)  # 12 passages
    assert len((folder / "corpus.jsonl").read_text().splitlines()) == 12
    res = triage(server, folder, tmp_path / "out", tmp_path / "c", "--k", "2")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "out" / "triage.json").read_text())["meta"]["depth"] == 12
    before = server.requests
    line = one_line_error(triage(server, folder, tmp_path / "out2", tmp_path / "c", "--k", "2", "--depth", "20"),
                          server, before)
    assert "--depth 20 is larger than the 12 passages" in line
    line = one_line_error(triage(server, folder, tmp_path / "out3", tmp_path / "c", "--k", "13"), server, before)
    assert "--k 13" in line and "12 passages" in line


def test_a_typed_result_stamped_once_and_a_tampered_one_is_one_line_in_the_report(server, tmp_path):
    from ragdiag.results.triage import CauseShare, TriageResult

    folder = corpus(tmp_path / "set", [151, 152])
    res = triage(server, folder, tmp_path / "out", tmp_path / "c")
    assert res.exit_code == 0, res.output
    text = (tmp_path / "out" / "triage.json").read_text()
    doc = json.loads(text)
    assert list(doc) == ["meta", "queries", "causes", "calls", "cost", "left_out", "notes", "run_record"]
    assert text.count('"run_record"') == 1
    result = TriageResult.from_json(doc)
    assert isinstance(result.causes["ranking"], CauseShare) and result.causes["ranking"].count == 2
    assert result.meta.k == 5 and result.calls.paid == result.cost.paid and result.to_json() == doc
    for path, value in ((("causes", "ranking"), "many"), (("causes", "ranking", "count"), "two"),
                        (("calls", "paid"), "x"), (("left_out",), [{"id": "q"}])):
        bad = json.loads(text)
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        tampered = tmp_path / "tampered.json"
        tampered.write_text(json.dumps(bad))
        done = CliRunner().invoke(app, ["report", str(tampered), "--out", str(tmp_path / "r.html")])
        lines = [line for line in done.output.splitlines() if line.strip()]
        assert done.exit_code == 2 and lines[-1].startswith("ragdiag: error: ") and "Traceback" not in done.output, \
            (path, done.output)
        assert ".".join(path[:2]) in lines[-1] or path[0] in lines[-1]
