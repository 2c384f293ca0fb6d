"""The interventions' contexts and the decision tree on hand-made cases (no server)."""

from __future__ import annotations

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.triage.erag import aggregate, kendall, trec_qrels, utility_rows
from ragdiag.triage.inputs import TriageQuery
from ragdiag.triage.interventions import parse_interventions, sweep_ks, variants
from ragdiag.triage.repeats import consistent, flaky_baseline
from ragdiag.triage.smallest import next_asks, size
from ragdiag.triage.tree import CAUSES, Evidence, decide, evidence_of

POOL = ["a", "b", "c", "d", "e", "f", "g", "h"]


def _contexts(relevant: list[str], name: str, k: int = 5) -> dict:
    return variants(TriageQuery("q", "text", POOL, relevant), name, k, sweep_ks(k, None), 10)


def test_inject_brings_a_missing_relevant_passage_even_when_another_is_in_the_top_k():
    assert _contexts(["g"], "inject") == {"inject": ("a", "b", "c", "d", "g")}
    # an answer split across ranks 3 and 7: g replaces the lowest-ranked non-relevant passage
    assert _contexts(["c", "g"], "inject") == {"inject": ("a", "b", "c", "d", "g")}
    assert _contexts(["e", "g"], "inject") == {"inject": ("a", "b", "c", "g", "e")}
    assert _contexts(["c"], "inject") == {}  # nothing relevant is missing from the top K
    assert _contexts(["zz"], "inject") == {}  # none in the pool either: a retrieval miss


def test_position_first_and_last_drop_oracle_and_k_sweep():
    assert _contexts(["d"], "position") == {"position": ("d", "a", "b", "c", "e"),
                                            "position@last": ("a", "b", "c", "e", "d")}
    assert _contexts(["a"], "position") == {"position@last": ("b", "c", "d", "e", "a")}  # first already
    assert _contexts(["e"], "position") == {"position": ("e", "a", "b", "c", "d")}  # last already
    # the top K without its non-relevant passages differs from the oracle (g is relevant too): one change
    assert _contexts(["b", "d", "g"], "drop-distractors") == {"drop-distractors": ("b", "d")}
    # ... equals it: one passage dropped at a time instead (each relevant one too when two are in the top K)
    assert _contexts(["a"], "drop-distractors") == {f"drop-distractors:{d}": tuple(x for x in "abcde" if x != d)
                                                    for d in "bcde"}
    assert list(_contexts(["a", "b"], "drop-distractors")) == [f"drop-distractors:{d}" for d in "abcde"]
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


BASE = ("a", "b", "c", "d", "e")
CONTEXTS = {"closed-book": (), "oracle": ("d",), "inject": ("a", "b", "c", "d", "g"), "position": ("d", "a", "b", "c", "e"),
            "position@last": ("a", "b", "c", "e", "d"), "drop-distractors": ("d",), "k-sweep@1": ("a",),
            "k-sweep@3": ("a", "b", "c"), "k-sweep@10": ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")}


def _ev(planned: set[str], grades: dict, relevant=True, in_pool=True, degenerate=False, judge=True, **kw) -> Evidence:
    sizes = {lb: size(CONTEXTS[lb], BASE) for lb in planned}
    return Evidence(degenerate, relevant, in_pool, 5, 3.0, planned, {"baseline": 1.0, **grades}, sizes=sizes,
                    judge=judge, **kw)


ALL = {"closed-book", "oracle", "position", "position@last", "drop-distractors", "k-sweep@1", "k-sweep@3", "k-sweep@10"}
FAIL = dict.fromkeys(ALL - {"k-sweep@10"}, 1)


@pytest.mark.parametrize(("grades", "expected"), [
    ({"closed-book": 5}, ("parametric", [])),
    ({"oracle": 2}, ("generator", [])),
    # the smallest fix names the cause (a reorder changes no passage), every other fix goes to also
    ({"oracle": 5, "position": 5, "drop-distractors": 5}, ("position", ["distractors"])),
    ({"oracle": 5, "position@last": 5}, ("position", [])),
    ({"oracle": 5, "k-sweep@3": 4}, ("context-size", [])),
    ({"oracle": 1, "k-sweep@1": 5}, ("context-size", [])),  # k = 1 fixes it: not the generator
    ({"oracle": 5, "position": 2}, ("unexplained", [])),
])
def test_the_smallest_fix_is_the_primary_cause(grades, expected):
    assert decide(_ev(ALL, {**FAIL, **grades})) == expected


def test_tree_waits_for_the_interventions_no_larger_than_the_fix_and_for_the_judge_check():
    assert decide(_ev(ALL, {"closed-book": 1, "oracle": 5})) == (None, [])  # position not run yet
    assert decide(_ev(ALL, {"position": 1, "position@last": 1, "k-sweep@3": 5})) == ("context-size", [])
    assert decide(_ev(ALL, {**FAIL}, judge=None)) == (None, [])  # nothing fixed it: the judge check first
    assert decide(_ev(ALL, {**FAIL}, judge=False)) == ("judge", [])
    assert decide(_ev(ALL, {}, degenerate=True))[0] == "reference"
    assert decide(_ev({"closed-book"}, {}, relevant=False))[0] == "qrels-gap"
    assert decide(_ev({"closed-book", "oracle", "k-sweep@1", "k-sweep@3"}, {"closed-book": 1, "oracle": 5,
                                                                           "k-sweep@1": 1, "k-sweep@3": 1},
                      in_pool=False)) == ("retrieval-miss", [])
    # a fix: the grade reaches --fail-below, or improves by 2 (1 → 3 with F = 4)
    ev = Evidence(False, True, True, 5, 4.0, {"closed-book", "oracle", "inject"},
                  {"baseline": 1.0, "closed-book": 1.0, "oracle": 5.0, "inject": 3.0},
                  sizes={"closed-book": 5, "oracle": 5, "inject": 2})
    assert decide(ev) == ("ranking", [])
    assert CAUSES[-1] == "unexplained"


def test_repeats_a_fix_holds_on_every_repeat_and_a_flaky_baseline_is_the_generator_or_the_judge():
    ev = _ev(ALL, {**FAIL, "position": 5, "k-sweep@3": 5}, repeats=3)
    assert decide(ev) == (None, [])  # position fixed on repeat 0: its repeats next
    assert next_asks(ev, exhaustive=False) == ([], ["position"])
    ev.repeat_grades["position"] = [5.0, 1.0]  # it did not hold
    assert decide(ev) == (None, [])
    ev.repeat_grades["k-sweep@3"] = [5.0, 4.0]
    assert decide(ev) == ("context-size", [])
    assert flaky_baseline([1.0, 5.0, 1.0], ["x", "x", "x"], 3.0) == "judge"  # the same answer, another grade
    assert flaky_baseline([1.0, 5.0, 1.0], ["x", "y", "x"], 3.0) == "generator"
    assert flaky_baseline([1.0, 1.0, 2.0], ["x", "y", "x"], 3.0) is None
    assert decide(_ev(ALL, {}, flaky="generator")) == ("generator", [])
    assert consistent(1.0, [1.0], [5.0, 5.0], 3.0) and not consistent(1.0, [5.0], [5.0], 3.0)
    assert not consistent(1.0, [1.0], [5.0, 1.0], 3.0)  # the reference itself graded wrong


def test_without_the_oracle_the_qrels_decide_a_retrieval_miss_and_say_so():
    no_oracle = {"closed-book", "k-sweep@1", "k-sweep@3"}  # no reference answers: no oracle
    assert decide(_ev(no_oracle, {}, in_pool=False)) == (None, [])  # the smaller K come first
    miss = _ev(no_oracle, {"closed-book": 1, "k-sweep@1": 1, "k-sweep@3": 1}, in_pool=False)
    assert decide(miss) == ("retrieval-miss", [])  # no oracle: the qrels alone decide
    assert evidence_of(miss, "retrieval-miss", references=False) == ["qrels"]
    oracle_miss = _ev({"closed-book", "oracle"}, {"closed-book": 1, "oracle": 5}, in_pool=False)
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


def test_attribution_uncertainty_from_the_repeats_widens_the_cause_intervals():
    from ragdiag.triage.attribution import attribution_intervals, cause_probabilities

    ev = _ev(ALL, {**FAIL, "position": 5, "k-sweep@3": 5}, repeats=3)
    ev.repeat_grades.update({"position": [5.0, 1.0], "k-sweep@3": [5.0, 5.0]})  # position held on 2 of 3
    assert decide(ev) == ("context-size", [])
    pi = cause_probabilities(ev, "context-size")
    assert pi["position"] == pytest.approx((2 / 3) ** 3) and sum(pi.values()) == pytest.approx(1.0)
    certain = [{"generator": 1.0}] * 10
    low, high = attribution_intervals(certain + [pi] * 10, 400, 0)["context-size"]
    # the same queries with certain causes: query sampling alone gives a narrower interval
    plain_low, plain_high = attribution_intervals(certain + [{"context-size": 1.0}] * 10, 400, 0)["context-size"]
    assert low < plain_low and high - low > plain_high - plain_low
