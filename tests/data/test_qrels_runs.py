"""TREC / BEIR qrels and run files: sniffing, ordering, duplicates, 1-based line numbers, round trips."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragdiag.data.qrels_runs import (
    read_qrels,
    read_run,
    read_run_ids,
    run_depth,
    run_file_text,
)
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.writer import OutputError, write_text

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_qrels_keep_doc_ids(tmp_path):
    path = _write(tmp_path, "qrels.dev.small.tsv", "1102432\t0\t2026790\t1\n1102431\t0\t7066866\t1\n1102431\t0\t7066867\t2\n")
    assert read_qrels(path) == {"1102432": {"2026790": 1}, "1102431": {"7066866": 1, "7066867": 2}}


def test_trec_qrels_space_separated(tmp_path):
    path = _write(tmp_path, "q.txt", "301 0 FBIS3-10082 1\n301  0  FBIS3-10169 0\n")
    assert read_qrels(path) == {"301": {"FBIS3-10082": 1, "FBIS3-10169": 0}}


def test_beir_qrels_with_header(tmp_path):
    path = _write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 0}}


def test_headerless_beir_keeps_first_judgement(tmp_path):
    path = _write(tmp_path, "test.tsv", "q1\td1\t1\nq2\td9\t2\n")
    assert read_qrels(path) == {"q1": {"d1": 1}, "q2": {"d9": 2}}


def test_tab_separated_ids_may_hold_spaces(tmp_path):
    path = _write(tmp_path, "test.tsv", "query one\tdoc a\t1\n")
    assert read_qrels(path) == {"query one": {"doc a": 1}}


def test_qrels_errors_name_the_line(tmp_path):
    mixed = _write(tmp_path, "mixed.tsv", "q1\td1\t1\n\nq1\t0\td2\t1\n")
    with pytest.raises(DataError, match=r"mixed.tsv: record 3: expected 3 columns"):
        read_qrels(mixed)
    bad = _write(tmp_path, "bad.tsv", "query-id\tcorpus-id\tscore\nq1\td1\thigh\n")
    with pytest.raises(DataError, match=r"record 2: field 'relevance': not an integer: 'high'"):
        read_qrels(bad)
    run_like = _write(tmp_path, "run.trec", "q1 Q0 d1 1 3.5 tag\n")
    with pytest.raises(DataError, match="record 1: .*looks like a TREC run file"):
        read_qrels(run_like)
    conflict = _write(tmp_path, "conflict.tsv", "q1\td1\t1\nq1\td1\t0\n")
    with pytest.raises(DataError, match="record 2: .*judges document 'd1' 0, but line 1 judged it 1"):
        read_qrels(conflict)
    with pytest.raises(DataError, match="no judgements"):
        read_qrels(_write(tmp_path, "header_only.tsv", "query-id\tcorpus-id\tscore\n"))
    with pytest.raises(DataError, match="file not found"):
        read_qrels(tmp_path / "absent.tsv")


def test_jsonl_run(tmp_path):
    path = _write(tmp_path, "run.jsonl", '{"query_id": "q1", "ids": ["b", "a"], "scores": [2.0, 1.5]}\n{"query_id": 7, "ids": [3], "scores": [0.1]}\n')
    assert read_run(path) == {"q1": [("b", 2.0), ("a", 1.5)], "7": [("3", 0.1)]}
    assert read_run_ids(path) == {"q1": ["b", "a"], "7": ["3"]}
    assert read_run_ids(path) == {"q1": ["b", "a"], "7": ["3"]}


def test_trec_run_ordered_by_rank_then_score(tmp_path):
    text = "q1 Q0 c 3 0.5 t\nq1 Q0 a 1 0.9 t\nq2 Q0 x 1 4 t\nq1 Q0 b 2 0.7 t\nq1 Q0 e 4 0.1 t\nq1 Q0 d 4 0.3 t\n"
    run = read_run(_write(tmp_path, "run.trec", text))
    assert [d for d, _ in run["q1"]] == ["a", "b", "c", "d", "e"]
    assert read_run_ids(tmp_path / "run.trec") == {"q1": ["a", "b", "c", "d", "e"], "q2": ["x"]}
    assert run["q2"] == [("x", 4.0)]
    assert run_depth(run) == 5


def test_duplicate_docs_in_a_run_are_rejected(tmp_path):
    trec = _write(tmp_path, "dup.trec", "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\nq1 Q0 a 3 0.7 t\n")
    with pytest.raises(DataError, match=r"record 3: query 'q1' ranks document 'a' twice \(lines 1 and 3\)"):
        read_run(trec)
    jsonl = _write(tmp_path, "dup.jsonl", '{"query_id": "q1", "ids": ["a", "a"], "scores": [1, 1]}\n')
    with pytest.raises(DataError, match="record 1: query 'q1' ranks document 'a' twice"):
        read_run(jsonl)
    with pytest.raises(DataError, match="record 1: query 'q1' ranks document 'a' twice"):
        read_run_ids(jsonl)
    again = _write(tmp_path, "again.jsonl", '{"query_id": "q1", "ids": ["a"], "scores": [1]}\n{"query_id": "q1", "ids": ["b"], "scores": [1]}\n')
    with pytest.raises(DataError, match="record 2: field 'query_id': query 'q1' already ranked on line 1"):
        read_run(again)


def test_run_errors(tmp_path):
    with pytest.raises(DataError, match=r"record 1: field 'scores': expected 2 finite numbers"):
        read_run(_write(tmp_path, "s.jsonl", '{"query_id": "q", "ids": ["a", "b"], "scores": [1.0, NaN]}\n'))
    with pytest.raises(DataError, match=r"record 2: field 'rank': not an integer"):
        read_run(_write(tmp_path, "r.trec", "q Q0 a 1 1.0 t\nq Q0 b two 1.0 t\n"))
    with pytest.raises(DataError, match=r"record 1: .*looks like a qrels file"):
        read_run(_write(tmp_path, "q.trec", "q 0 a 1\n"))
    with pytest.raises(DataError, match="empty"):
        read_run(_write(tmp_path, "empty.jsonl", "\n\n"))
    with pytest.raises(DataError, match="empty"):
        read_run_ids(tmp_path / "empty.jsonl")


def test_line_numbers_with_crlf_cr_and_blank_lines(tmp_path):
    crlf = tmp_path / "crlf.tsv"
    crlf.write_bytes(b"q1\td1\t1\r\n\r\nq2\td2\t2\r\nq1\td1\t3\r\n")
    with pytest.raises(DataError, match="record 4: .*judges document 'd1' 3, but line 1 judged it 1"):
        read_qrels(crlf)
    lone_cr = tmp_path / "cr.tsv"
    lone_cr.write_bytes(b"q1\td1\t1\r\rq1\td2\tx\r")
    with pytest.raises(DataError, match="record 3: field 'relevance': not an integer: 'x'"):
        read_qrels(lone_cr)
    repeated = _write(tmp_path, "same.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td1\t2\n")
    assert read_qrels(repeated) == {"q1": {"d1": 2}}  # an identical repeat is not a conflict


def test_jsonl_run_rejects_non_scores_and_non_ids(tmp_path):
    with pytest.raises(DataError, match=r"record 2: field 'scores': expected 2 finite numbers"):
        read_run(_write(tmp_path, "b.jsonl", '{"query_id": "q", "ids": ["a"], "scores": [1]}\n'
                                              '{"query_id": "r", "ids": ["a", "b"], "scores": [true, 1.0]}\n'))
    with pytest.raises(DataError, match=r"record 1: field 'scores': expected 1 finite numbers"):
        read_run(_write(tmp_path, "s.jsonl", '{"query_id": "q", "ids": ["a"], "scores": ["1.0"]}\n'))
    with pytest.raises(DataError, match=r"record 1: field 'ids': missing or not a list"):
        read_run(_write(tmp_path, "i.jsonl", '{"query_id": "q", "ids": ["a", null], "scores": [2, 1]}\n'))
    with pytest.raises(DataError, match=r"j.jsonl: malformed JSON on line 1, column"):
        read_run(_write(tmp_path, "j.jsonl", '{"query_id": "q", "ids": ["a"\n'))
    big = read_run(_write(tmp_path, "big.jsonl", '{"query_id": 123456789012345678901234567891, "ids": [123456789012345678901234567890], "scores": [1]}\n'))
    assert big == {"123456789012345678901234567891": [("123456789012345678901234567890", 1.0)]}


@pytest.mark.parametrize("fmt", ["jsonl", "trec"])
def test_write_read_round_trip(tmp_path, fmt):
    run = {"q1": [("d3", 12.25), ("d1", 0.1 + 0.2), ("d2", -1e-300)], "q2": [("d1", 1.0)]}
    path = write_text(tmp_path / f"run.{fmt}", run_file_text(run, fmt=fmt, tag="bm25"))
    assert read_run(path) == run
    if fmt == "trec":
        assert path.read_text().splitlines()[0] == "q1 Q0 d3 1 12.25 bm25"


def test_write_trec_refuses_whitespace_ids_and_inputs(tmp_path):
    with pytest.raises(RagdiagError, match="document id 'd 1' cannot be written to a TREC run file"):
        run_file_text({"q": [("d 1", 1.0)]}, fmt="trec")
    assert not (tmp_path / "r.trec").exists()
    queries = _write(tmp_path, "queries.jsonl", '{"_id": "q", "text": "x"}\n')
    with pytest.raises(OutputError, match="would overwrite the input"):
        write_text(queries, run_file_text({"q": [("d", 1.0)]}), inputs=[queries])
    assert queries.read_text() == '{"_id": "q", "text": "x"}\n'


@pytest.mark.skipif(not (DATA / "msmarco-passage-sample" / "original" / "qrels.dev.small.tsv").is_file(), reason="../shared/data/msmarco-passage-sample absent")
def test_official_msmarco_trec_qrels_match_beir_conversion():
    trec = read_qrels(DATA / "msmarco-passage-sample" / "original" / "qrels.dev.small.tsv")
    beir = read_qrels(DATA / "msmarco-passage-sample" / "qrels" / "dev.tsv")
    assert all(doc != "0" for docs in trec.values() for doc in docs)
    for query_id, docs in beir.items():
        assert trec[query_id] == docs


@pytest.mark.parametrize("layout, value, ok", [("tsv", "d 1", True), ("tsv", "d\t1", False), ("tsv", "d\n1", False),
                                               ("tsv", "d\u20281", False), ("tsv", "", False), ("trec", "d 1", False),
                                               ("trec", "d\u00a01", False), ("trec", "d-1", True)])
def test_one_id_check_for_every_tsv_and_trec_writer(layout, value, ok):
    from ragdiag.data.qrels_runs import check_ids_fit

    if ok:
        check_ids_fit(layout, [("document id", [value])])
    else:
        with pytest.raises(RagdiagError, match=f"document id {re.escape(repr(value))} cannot be written"):
            check_ids_fit(layout, [("document id", [value])])
