"""The one measure registry: typed measures that parse back from their own spelling, option parsers that
accept exactly the registry's names (and nothing else), help and labels derived from it, and every
measure list of the code read from it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.errors import RagdiagError
from ragdiag.measures import HIGHER, LOWER, SETS, parse_bound, registry
from ragdiag.measures.registry import CORRELATE, EVALUATE, MATCHED_RECALL, QUERY_IMPACT


@pytest.mark.parametrize("measures", SETS, ids=lambda s: s.name)
def test_every_measure_is_complete_and_named_once_per_set(measures):
    assert len(set(measures.names)) == len(measures.measures)
    assert len({m.label for m in measures.measures}) == len(measures.measures)
    for m in measures.measures:
        assert m.direction in (HIGHER, LOWER) and m.label and m.description and m.params
        assert callable(m.compute()), m.implementation  # the implementation it names exists


@pytest.mark.parametrize("text", ["ndcg@10", "ra_nwg@30", "recall@1", "harm@5", "ndcg", "nrecall4@10"])
def test_an_evaluate_measure_parses_back_from_its_own_spelling(text):
    bound = EVALUATE.bound(text)
    assert str(bound) == text and bound.name == text.partition("@")[0]
    assert bound.label == EVALUATE.label_at(text)


def test_typed_parameters_in_the_ir_measures_style():
    f = CORRELATE["F"]
    assert str(f(alpha=0.5) @ 10) == str(f.bind(alpha=0.5, cutoff=10)) == "F(alpha=0.5)@10"
    assert parse_bound("F(alpha=0.5)@10", CORRELATE.by_name) == f.bind(alpha=0.5, cutoff=10)
    assert str(parse_bound("E(alpha=0.25,xk=2)@5", CORRELATE.by_name)) == "E(alpha=0.25,xk=2)@5"
    assert (EVALUATE["ndcg"] @ 10).label == "nDCG@10" and str(EVALUATE["ndcg"] @ 10) == "ndcg@10"
    for bad, message in [("ndcg@0", "needs a whole K ≥ 1"), ("ndcg@x", "needs a whole K ≥ 1"),
                         ("F(beta=2)@10", "F takes cutoff, alpha"), ("F(alpha=x)", "'x' is not a number"),
                         ("nope@10", "unknown measure 'nope@10'")]:
        with pytest.raises(RagdiagError, match=message):
            parse_bound(bad, {**CORRELATE.by_name, **EVALUATE.by_name})
    with pytest.raises(RagdiagError, match="cutoff must be an integer"):
        EVALUATE["ndcg"].bind(cutoff=2.5)


def test_correlate_measures_option_accepts_exactly_the_registry_names():
    assert registry.parse_measures(",".join(CORRELATE.names)) == CORRELATE.names
    done = CliRunner().invoke(app, ["correlate", "--measures", "F,ndcg"])
    assert done.exit_code == 2
    assert "unknown measure 'ndcg': expected one of F, E, T, T', nDCG, P, R" in " ".join(done.output.split())
    help_text = " ".join(CliRunner().invoke(app, ["correlate", "--help"], env={"COLUMNS": "400"}).output.split())
    for m in CORRELATE.measures:
        assert m.description in help_text  # the measure definitions in the command's help
    assert registry.MEASURES_HELP.startswith("Comma list of F, E, T, T'")


def test_evaluate_and_compare_metrics_accept_exactly_the_registry_names():
    assert registry.parse_metrics(",".join(reversed(EVALUATE.names))) == tuple(reversed(EVALUATE.names))
    with pytest.raises(RagdiagError, match=f"unknown metric 'nDCG': expected one of {', '.join(EVALUATE.names)}"):
        registry.parse_metrics("nDCG")
    assert registry.parse_metrics_at(",".join(f"{n}@3" for n in EVALUATE.names)) == [(n, 3) for n in EVALUATE.names]
    with pytest.raises(RagdiagError, match="unknown metric 'F' in 'F@3'; choose from ra_nwg, proc"):
        registry.parse_metrics_at("F@3")
    with pytest.raises(RagdiagError, match=r"'ndcg' is not METRIC@K \(e.g. ndcg@10\)"):
        registry.parse_metrics_at("ndcg")
    assert registry.metrics_help() == f"Comma list of {', '.join(EVALUATE.names)} (default all)."


def test_the_code_reads_its_measure_lists_from_the_registry():
    from ragdiag.bench import matched_recall
    from ragdiag.commands import calibrate
    from ragdiag.compare import inputs
    from ragdiag.evaluate import clq, dynamic_k
    from ragdiag.probes import query_impact
    from ragdiag.report import matched_recall_plots, names_real_report
    from ragdiag.report.html import sections

    assert dynamic_k.METRICS == registry.DYNAMIC_K and set(dynamic_k.METRICS) <= set(EVALUATE.names)
    assert query_impact.METRICS == QUERY_IMPACT.names == ("nrecall4", "ra_nwg", "recall")
    assert names_real_report.LABELS == {"nrecall4": "N-Recall4+", "ra_nwg": "RA-nWG", "recall": "recall"}
    assert clq.EFFICIENCY_METRICS == ("nrecall4@10", "nrecall4@30", "ra_nwg@10", "ra_nwg@30")
    assert clq.DEFAULT_QUALITY == ("ra_nwg@10", "nrecall4@10")
    assert inputs.DEFAULT_RUN_METRICS == "ndcg@10,ra_nwg@10,recall@20"
    assert sections.HEADLINE_METRICS == registry.HEADLINE and set(registry.HEADLINE) <= set(EVALUATE.names)
    assert calibrate.SLOPE_MEASURES == ("P", "R", "nDCG") and set(calibrate.SLOPE_MEASURES) <= set(CORRELATE.names)
    assert (*matched_recall.RANKING, *(f"p{q}" for q in matched_recall.PERCENTILES)) == MATCHED_RECALL.names
    assert matched_recall_plots._NAMES == {"map": "MAP", "ndcg": "nDCG", "mrr": "MRR (1-NN)", "hit_rate": "hit rate (1-NN)",
                                           "p5": "p5 recall", "p10": "p10 recall", "p50": "p50 recall"}


def test_matched_recall_table_headers_come_from_the_registry():
    from ragdiag.report.matched_recall_table import _header

    assert [_header(n, 10) for n in MATCHED_RECALL.names] == ["MAP@10", "nDCG@10", "MRR@10", "hit@10", "p5 recall",
                                                              "p10 recall", "p50 recall"]


def test_the_registry_package_imports_no_numpy():
    code = "import sys, ragdiag.measures, ragdiag.measures.registry; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_each_metric_names_the_options_that_change_it():
    weights = ("--alpha", "--cap4", "--cap3", "--fallback4", "--fallback3")
    assert {m.name: m.options for m in EVALUATE.measures} == {
        "ra_nwg": weights, "proc": ("--pool-depth", *weights), "pct_proc": ("--pool-depth", *weights), "nrecall4": (),
        "nrecall5": (), "hit": ("--gold",), "harm": ("--harm-max",), "unjudged": (), "ndcg": (), "recall": ("--gold",),
        "mrr": ("--gold",), "map": ("--gold",), "precision": ("--gold",)}
    assert {m.name: m.options for m in CORRELATE.measures if m.options} == {
        "F": ("--alpha-grid",), "E": ("--alpha-grid", "--xk"), "T": ("--alpha-grid",), "T'": ("--alpha-grid",)}
