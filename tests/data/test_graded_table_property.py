"""Issue 9, property: random well-formed and malformed graded records, fed to the loader and to
correlate, end in a result or in one clear :class:`RagdiagError` line, never another exception.

Well-formed files must load (and correlate, or say in one line why no segment is left); files with
one record broken must be refused with a message naming the broken record (1-based) — or, for a
duplicate, both records.

Example budgets: 30 lists for the well-formed property (each one also runs correlate, the costly
part; lists of 0–40 records, shrunk towards the empty and one-record edge cases) and 60 for the
broken one (4 ways of breaking × 7 fields: ≈15 draws per way, every field reached), half and
40 % of the former 60/150. In a checkout Hypothesis keeps failing examples in .hypothesis/ and replays them
first, so a found bug stays found across runs.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.data.loaders import load_graded_file
from ragdiag.errors import RagdiagError
from ragdiag.measures.sample import ndcg
from ragdiag.metrics.analysis import CorrelateOptions
from ragdiag.metrics.correlate_job import run_correlation

JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                         st.text(max_size=5))
ANY_JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                        max_leaves=8)


@st.composite
def graded_record(draw, query: int | None = None) -> dict:
    """One valid graded record: 1 ≤ Np ≤ Nc, 1 ≤ K ≤ Nc, inK a 0/1 list of length K with at most Np ones."""
    nc = draw(st.integers(1, 12))
    np_ = draw(st.integers(1, nc))
    k = draw(st.integers(1, nc))
    ones = draw(st.integers(0, min(np_, k)))
    in_k = [1] * ones + [0] * (k - ones)
    in_k = draw(st.permutations(in_k)) if k > 1 else in_k
    grade = draw(st.one_of(st.none(), st.integers(1, 5), st.floats(1, 5)))
    qid = query if query is not None else draw(st.integers(0, 5))
    return {"id": f"{draw(st.sampled_from(['M', 'A', 'N']))}-{qid}", "E": draw(st.sampled_from(["AM", "QM"])),
            "Nc": nc, "Np": np_, "K": k, "inK": list(in_k), "grade": grade}


def _unique(records: list[dict]) -> list[dict]:
    seen, out = set(), []
    for r in records:
        key = (r["id"], r["E"], r["Nc"], r["Np"], r["K"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _one_line(err: RagdiagError) -> str:
    message = str(err)
    assert message and "\n" not in message and "Traceback" not in message
    return message


def _correlate(table) -> None:
    opts = CorrelateOptions(min_samples=1, alpha_grid="l4^0.5", measures=("F", "E", "T", "nDCG"),
                            kinds=("spearman", "kendall_b"))
    try:
        report = run_correlation(table, opts).to_json()
    except RagdiagError as err:
        _one_line(err)
        return
    for row in report["results"]:
        for kind in ("spearman", "kendall_b"):
            value = row[kind]["value"]
            assert value is None or (math.isfinite(value) and -1 - 1e-9 <= value <= 1 + 1e-9)
    assert report["meta"]["command"] == "correlate" and "run_record" not in report  # the command stamps it


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(graded_record(), min_size=0, max_size=40))
def test_well_formed_records_load_and_correlate(records):
    records = _unique(records)
    table = build_graded_table(records, "<mem>", GradedSource("<mem>"))
    assert len(table) + table.skipped_missing_grade == len(records)
    values = ndcg(table.in_k, table.K, table.n)
    assert ((table.n <= table.Np) & (table.Nc >= table.K) & (values >= 0) & (values <= 1 + 1e-12)).all()
    if len(table):
        _correlate(table)


FIELDS = ["id", "E", "Nc", "Np", "K", "inK", "grade"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(graded_record(), min_size=1, max_size=12), st.data())
def test_one_broken_record_is_refused_naming_it(records, data):
    records = _unique(records)
    victim = data.draw(st.integers(0, len(records) - 1))
    how = data.draw(st.sampled_from(["replace", "drop", "not-an-object", "duplicate"]))
    broken = [dict(r) for r in records]
    if how == "replace":
        field = data.draw(st.sampled_from(FIELDS))
        broken[victim][field] = data.draw(ANY_JSON)
    elif how == "drop":
        broken[victim].pop(data.draw(st.sampled_from(FIELDS)))
    elif how == "not-an-object":
        broken[victim] = data.draw(st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3)))
    else:
        broken.insert(victim + 1, dict(broken[victim]))
    try:
        table = build_graded_table(broken, "<mem>", GradedSource("<mem>"))
    except RagdiagError as err:
        message = _one_line(err)
        if how == "duplicate":
            assert f"records {victim + 1} and {victim + 2} are the same sample" in message
        elif "are the same sample" in message:  # a valid replacement that collides with another record's key
            assert how == "replace" and str(victim + 1) in message.split(" are the same")[0].split()
        else:
            assert message.startswith(f"<mem>: record {victim + 1}: "), message
        return
    # the replacement happened to be valid (e.g. a grade replaced by another grade): a normal result
    assert how == "replace" and len(table) + table.skipped_missing_grade == len(broken)
    if len(table):
        _correlate(table)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(graded_record(), ANY_JSON), min_size=0, max_size=8))
def test_files_of_anything_load_or_fail_in_one_line(tmp_path, items):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(items, allow_nan=True))
    try:
        table = load_graded_file(path)
    except RagdiagError as err:
        assert str(path) in _one_line(err)
        return
    if len(table):
        _correlate(table)
