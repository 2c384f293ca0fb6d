"""The reference-quality gate on real model output and on EN/FR answers in the style real models write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.data.reference_gate import (
    KINDS,
    copies_question,
    count_kinds,
    degenerate_kind,
    load_patterns,
    make_gate,
)
from ragdiag.errors import RagdiagError

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-llm-answers"


def _real(name: str) -> list[dict]:
    path = REAL / f"{name}.answers.jsonl"
    if not path.is_file():
        pytest.skip(f"real model answers not found at {path} (see /work/shared/data/real-llm-answers/SOURCE.md)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _classify(rows: list[dict], kind: str) -> list[str | None]:
    chosen = [r for r in rows if r["kind"] == kind]
    return make_gate().classify([r["answer"] for r in chosen], [r["q"] for r in chosen])


def test_real_scifact_ideal_refusals_are_caught_and_the_real_answer_kept():
    rows = _real("scifact")
    kinds = _classify(rows, "ideal")
    assert count_kinds(kinds)["refusal"] == 7 and count_kinds(kinds)["total"] == 7
    usable = [r["answer"] for r, k in zip([r for r in rows if r["kind"] == "ideal"], kinds) if k is None]
    assert usable == ["The references support the statement that ADAR1 binds to Dicer to cleave pre-miRNA."]


def test_real_msmarco_prompt_echoes_are_caught_and_plain_answers_kept():
    rows = _real("msmarco")
    ideal = [r for r in rows if r["kind"] == "ideal"]
    kinds = _classify(rows, "ideal")
    echoed = {r["id"] for r, k in zip(ideal, kinds) if k == "prompt_echo"}
    assert echoed == {r["id"] for r in ideal if "text inside the <question>" in r["answer"]} and echoed
    assert all(k is None for r, k in zip(ideal, kinds) if r["id"] not in echoed)  # "Port Talbot, Wales" is fine
    topk = [r for r in rows if r["kind"] == "topK"]
    topk_kinds = _classify(rows, "topK")
    assert {k for r, k in zip(topk, topk_kinds) if "<question> element" in r["answer"]} == {"prompt_echo"}
    assert {k for r, k in zip(topk, topk_kinds) if r["answer"].startswith("The references are insufficient")} == {"refusal"}


# Written in the style small instruct models answer with (refusals, echoes of the fenced prompt).
EN = {
    "The references are insufficient to answer the question.": "refusal",
    "I'm sorry, but the provided passages do not contain information about the author's birthplace.": "refusal",
    "Based on the given context, I cannot determine when the treaty was signed.": "refusal",
    "There is no information in the references about vitamin D dosage.": "refusal",
    "The passages don't mention the population of Lyon.": "refusal",
    'The text inside the <question> element is "who wrote Dune". Frank Herbert wrote Dune.': "prompt_echo",
    "According to &lt;passage id=\"2\"&gt;, the bridge opened in 1932.": "prompt_echo",
    "   \n ": "empty",
    "": "empty",
    "Frank Herbert wrote Dune, published in 1965.": None,
    "The study found no significant effect of the drug on survival.": None,
    "Yes.": None,
}
FR = {
    "Je ne peux pas répondre à cette question à partir des références fournies.": "refusal",
    "Les références ne permettent pas de répondre à la question.": "refusal",
    "Désolé, les passages ne contiennent pas cette information.": "refusal",
    "Les informations fournies sont insuffisantes pour répondre.": "refusal",
    "Aucune information sur la date de naissance n'est donnée dans les références.": "refusal",
    "Le texte à l'intérieur de l'élément <question> demande qui a écrit Dune. Frank Herbert.": "prompt_echo",
    "Frank Herbert a écrit Dune, publié en 1965.": None,
    "La Tour Eiffel mesure 330 mètres depuis 2022.": None,
}


@pytest.mark.parametrize(("answer", "expected"), [*EN.items(), *FR.items()])
def test_styled_answers_en_fr(answer, expected):
    assert degenerate_kind(answer, "who wrote Dune", load_patterns()) == expected


def test_question_copy_and_too_long():
    patterns = load_patterns()
    question = "where was paul newman born?"
    assert degenerate_kind("Where was Paul Newman born", question, patterns) == "question_copy"
    assert degenerate_kind("Paul Newman was born", question, patterns) == "question_copy"
    assert degenerate_kind("Shaker Heights, Ohio", question, patterns) is None
    assert not copies_question("born", question)  # one word of five: not a copy
    answers = ["Port Talbot, Wales", "Shaker Heights, Ohio", "In 1995.", "Frank Herbert" + " and more" * 40]
    kinds = make_gate(long_ratio=5).classify(answers, [None] * len(answers))
    assert kinds == [None, None, None, "too_long"]
    assert make_gate(long_ratio=50).classify(answers, [None] * len(answers))[-1] is None


def test_per_language_lists_and_user_extension(tmp_path):
    french_refusal = "Je ne peux pas répondre."
    assert degenerate_kind(french_refusal, None, load_patterns(languages=["en"])) is None
    assert degenerate_kind(french_refusal, None, load_patterns(languages=["fr"])) == "refusal"
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"refusal": {"en": [r"\bbeyond my knowledge\b"]}}))
    answer = "That is beyond my knowledge."
    assert degenerate_kind(answer, None, load_patterns()) is None
    extended = load_patterns(extra)
    assert degenerate_kind(answer, None, extended) == "refusal"
    assert extended.source.startswith("degenerate-patterns@v1+mine.json(sha256:")


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not a readable JSON patterns file"),
    ('{"refusal": {"en": ["("]}}', "'refusal.en' pattern 1 ('(') is not a regular expression"),
    ('{"refusals": {}}', "unknown key 'refusals'"),
    ('{"refusal": ["x"]}', "'refusal' must map a language code"),
    ('{"refusal": {"en": [""]}}', "'refusal.en' must be a list of non-empty strings"),
])
def test_bad_pattern_file_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RagdiagError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_patterns(path)


@pytest.mark.parametrize("ratio", [1.0, 1001.0, float("nan"), float("inf")])
def test_long_ratio_range(ratio):
    with pytest.raises(RagdiagError, match="--long-answer-ratio must be between 1.5 and 1000.0"):
        make_gate(long_ratio=ratio)


def test_count_kinds_lists_every_kind():
    counts = count_kinds(["refusal", None, "refusal", "empty"])
    assert counts == {**dict.fromkeys(KINDS, 0), "refusal": 2, "empty": 1, "total": 3, "answers": 4}


def test_cli_defaults_match_the_library():
    from ragdiag.answers.judging import GradingOptions
    from ragdiag.cli import options as params
    from ragdiag.data.reference_gate import DEFAULT_LONG_RATIO, LONG_RATIO_RANGE

    assert params.DEFAULT_LONG_ANSWER_RATIO == DEFAULT_LONG_RATIO == GradingOptions.long_answer_ratio
    assert GradingOptions.top_logprobs == params.DEFAULT_TOP_LOGPROBS
    assert "Range [1.5, 1000]" in params.LongAnswerRatio.__metadata__[0].help
    assert LONG_RATIO_RANGE == (1.5, 1000.0)


def test_classify_judges_each_distinct_pair_once_with_the_kinds_of_one_by_one(monkeypatch):
    from ragdiag.data import reference_gate

    answers = ["I'm sorry, I cannot answer that.", "Paris.", "Paris.", "", None, "Paris.", "x" * 40, "x" * 40]
    questions = [None, None, None, None, None, "Paris.", None, None]
    gate = make_gate()
    median = reference_gate.median_length(answers)
    one_by_one = [degenerate_kind(a, q, gate.patterns, median, gate.long_ratio) for a, q in zip(answers, questions)]
    calls = []
    judge = reference_gate.degenerate_kind
    monkeypatch.setattr(reference_gate, "degenerate_kind", lambda *args: calls.append(args[:2]) or judge(*args))
    assert gate.classify(answers, questions) == one_by_one
    assert one_by_one[:3] == ["refusal", None, None] and one_by_one[5] == "question_copy"
    assert len(calls) == len(set(zip(answers, questions))) == 6
