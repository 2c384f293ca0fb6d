"""The four JSON-lines readers of data/ (BEIR corpus and queries, metric tables, imports, runs) read
through ragdiag.io.jsonl (issue 28 §4): one message form, 1-based line numbers, the file named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragdiag.data.beir import load_queries
from ragdiag.data.importers import read_records
from ragdiag.data.metric_table import load_metric_table
from ragdiag.data.qrels_runs import read_run
from ragdiag.errors import DataError

DATA = Path(__file__).resolve().parents[2] / "ragdiag" / "data"
READERS = {
    "beir": (load_queries, '{"_id": "d1", "text": "one"}'),
    "metric_table": (lambda p: load_metric_table(p, "grade", ["m"], None, None), '{"grade": 3, "m": 0.5}'),
    "importers": (read_records, '{"question": "q"}'),
    "qrels_runs": (read_run, '{"query_id": "q1", "ids": ["d1"], "scores": [1.0]}'),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_malformed_line_is_named_by_its_1_based_number(name, tmp_path):
    read, good = READERS[name]
    path = tmp_path / "in.jsonl"
    path.write_text(good + "\n" + '{"broken": \n')
    with pytest.raises(DataError) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path}: malformed JSON on line 2, column ")
    assert "record" not in str(caught.value)


@pytest.mark.parametrize("name", ["beir", "metric_table", "qrels_runs"])
def test_a_line_that_is_not_an_object_is_named_by_its_line(name, tmp_path):
    read, good = READERS[name]
    path = tmp_path / "in.jsonl"
    path.write_text(good + "\n\n[1, 2]\n")  # the blank line still counts
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: line 3: expected a"):
        read(path)


def test_a_metric_table_field_error_names_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"grade": 3, "m": 0.5}\n{"grade": 4, "m": "high"}\n')
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: line 2: field 'm': not a number"):
        load_metric_table(path, "grade", ["m"], None, None)


@pytest.mark.parametrize("module", ["beir.py", "metric_table.py", "importers.py", "qrels_runs.py"])
def test_no_reader_splits_json_lines_on_its_own(module):
    source = "\n".join(line.split(" #")[0] for line in (DATA / module).read_text(encoding="utf-8").splitlines()
                        if not line.lstrip().startswith("#"))  # code only
    assert not re.search(r"""split\(b?["']\\n["']\)|splitlines\(""", source)
    assert "orjson.loads(line" not in source
