"""The interventions' contexts and the decision tree on hand-made cases (no server)."""

from __future__ import annotations

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.triage.erag import aggregate, kendall, trec_qrels, utility_rows
from ragdiag.triage.inputs import TriageQuery
from ragdiag.triage.interventions import parse_interventions, sweep_ks, variants
from ragdiag.triage.tree import CAUSES, Evidence, decide, evidence_of

POOL = ["a", "b", "c", "d", "e", "f", "g", "h"]


def _contexts(relevant: list[str], name: str, k: int = 5) -> dict:
    return variants(TriageQuery("q", "text", POOL, relevant), name, k, sweep_ks(k, None), 10)


def test_inject_replaces_the_lowest_ranked_passage_only_when_no_relevant_is_in_the_top_k():
    assert _contexts(["g"], "inject") == {"inject": ("a", "b", "c", "d", "g")}
    assert _contexts(["c", "g"], "inject") == {}  # a relevant passage is already in the top K
    assert _contexts(["zz"], "inject") == {}  # none in the pool either: a retrieval miss


def test_position_drop_oracle_and_k_sweep():
    assert _contexts(["d"], "position") == {"position": ("d", "a", "b", "c", "e")}
    assert _contexts(["a"], "position") == {}  # already first
    assert _contexts(["b", "d"], "drop-distractors") == {"drop-distractors": ("b", "d")}
    assert _contexts(["b", "d"], "oracle") == {"oracle": ("b", "d")}
    assert _contexts([], "oracle") == {}
    # 2K = 10 is deeper than this pool of 8: left out rather than mislabelled
    assert _contexts(["a"], "k-sweep") == {"k-sweep@1": ("a",), "k-sweep@3": ("a", "b", "c")}
    assert _contexts(["a"], "k-sweep", k=3)["k-sweep@6"] == tuple(POOL[:6])
    assert _contexts(["a"], "closed-book") == {"closed-book": ()}
    assert list(_contexts(["a"], "single-passage")) == [f"single:{d}" for d in "abcde"]


def test_unknown_intervention_is_one_line():
    with pytest.raises(RagdiagError, match="unknown intervention 'rerank'"):
        parse_interventions("oracle,rerank")
    assert parse_interventions("closed-book,oracle") == ("oracle", "closed-book")  # the tree's order


def _ev(planned: set[str], grades: dict, relevant=True, in_pool=True, degenerate=False) -> Evidence:
    return Evidence(degenerate, relevant, in_pool, 5, 3.0, planned, {"baseline": 1.0, **grades})


ALL = {"closed-book", "oracle", "inject", "position", "drop-distractors", "k-sweep@1", "k-sweep@3", "k-sweep@10"}


@pytest.mark.parametrize(("grades", "expected"), [
    ({"closed-book": 5, "oracle": 1}, ("parametric", [])),
    ({"closed-book": 1, "oracle": 2}, ("generator", [])),
    ({"closed-book": 1, "oracle": 5, "position": 5, "drop-distractors": 5}, ("position", ["distractors"])),
    ({"closed-book": 1, "oracle": 5, "position": 1, "drop-distractors": 1, "k-sweep@1": 1, "k-sweep@3": 4},
     ("context-size", [])),
    ({"closed-book": 1, "oracle": 5, "position": 2, "drop-distractors": 1, "k-sweep@1": 1, "k-sweep@3": 1},
     ("unexplained", [])),
])
def test_decision_tree_first_match(grades, expected):
    planned = ALL - {"inject"}  # a relevant passage in the top K, not first
    assert decide(_ev(planned, grades)) == expected


def test_tree_waits_for_the_intervention_it_needs_and_reads_the_gate_and_qrels_first():
    planned = ALL - {"inject"}
    assert decide(_ev(planned, {"closed-book": 1, "oracle": 5})) == (None, [])  # position not run yet
    assert decide(_ev(planned, {}, degenerate=True))[0] == "reference"
    assert decide(_ev({"closed-book"}, {}, relevant=False))[0] == "qrels-gap"
    assert decide(_ev(ALL - {"position", "drop-distractors"}, {"closed-book": 1, "oracle": 5}, in_pool=False)) \
        == ("retrieval-miss", [])
    # a fix: the grade reaches --fail-below, or improves by 2 (1 → 3 with F = 4)
    ev = Evidence(False, True, True, 5, 4.0, {"closed-book", "oracle", "inject"},
                  {"baseline": 1.0, "closed-book": 1.0, "oracle": 5.0, "inject": 3.0})
    assert decide(ev) == ("ranking", [])
    assert CAUSES[-1] == "unexplained"


def test_without_the_oracle_the_qrels_decide_a_retrieval_miss_and_say_so():
    no_oracle = ALL - {"oracle", "inject", "position", "drop-distractors"}  # no reference answers: no oracle
    assert decide(_ev(no_oracle, {}, in_pool=False)) == (None, [])  # closed-book (parametric) comes first
    miss = _ev(no_oracle, {"closed-book": 1}, in_pool=False)
    assert decide(miss) == ("retrieval-miss", [])  # no oracle: the qrels alone decide
    assert evidence_of(miss, "retrieval-miss", references=False) == ["qrels"]
    oracle_miss = _ev(ALL - {"position", "drop-distractors"}, {"closed-book": 1, "oracle": 5}, in_pool=False)
    assert evidence_of(oracle_miss, "retrieval-miss", references=True) == ["qrels", "references"]
    ranked = _ev({"closed-book", "inject", "k-sweep@1"}, {"closed-book": 1, "inject": 5})
    assert decide(ranked) == ("ranking", []) and evidence_of(ranked, "ranking", references=False) == ["qrels"]
    assert evidence_of(ranked, "context-size", references=True) == ["references"]


def test_erag_aggregations_and_tau():
    from scipy.stats import kendalltau

    rows = utility_rows({"q1": {"a": 5.0, "b": 1.0}, "q2": {"c": 2.0}})
    assert trec_qrels(rows) == "q1 0 a 5\nq1 0 b 1\nq2 0 c 2\n"
    assert aggregate([5.0, 1.0]) == {"p_at_k_mean": 3.0, "success_at_k_max": 5.0}
    x, y = [1.0, 2.0, 3.0, 3.5], [1.0, 3.0, 2.0, 5.0]
    assert kendall(x, y).tau == pytest.approx(kendalltau(x, y).statistic)
    assert kendall([1.0, 1.0], [1.0, 2.0]).tau is None  # constant: undefined
