"""The French prompts fence untrusted text exactly like the English v2 prompts (same hostile texts)."""

from __future__ import annotations

import re

import pytest

from ragdiag.llm.prompts import load_prompt, load_prompt_lang
from tests.llm.test_prompt_fencing import HOSTILE, _elements, _outside, _user


@pytest.mark.parametrize("hostile", HOSTILE)
def test_french_grading_prompt_keeps_one_question_one_ideal_one_candidate(hostile):
    prompt = load_prompt_lang("grading", "fr")
    assert prompt.id == "grading-fr@v1"
    user = _user(prompt.messages(query=f"Pourquoi ? {hostile}", ideal=f"Idéal. {hostile}", candidate=hostile))
    assert [(tag, body) for tag, _, body in _elements(user)] == [
        ("question", f"Pourquoi ? {hostile}"), ("ideal_answer", f"Idéal. {hostile}"), ("candidate_answer", hostile)]
    outside = _outside(user)
    assert outside.count("Réponse candidate :") == 1 and outside.count("Réponse idéale :") == 1
    assert user.count("<candidate_answer>") == 1 and user.count("<question>") == 1


@pytest.mark.parametrize("hostile", HOSTILE)
def test_french_generation_prompt_keeps_the_question_and_the_reference_numbers(hostile):
    prompt = load_prompt_lang("generation", "fr")
    assert prompt.id == "generation-fr@v1"
    passages = ["Premier passage.", hostile, f"Troisième passage. {hostile}"]
    user = _user(prompt.messages(query=hostile, references=passages))
    elements = _elements(user)
    assert [tag for tag, _, _ in elements] == ["question", "passage", "passage", "passage"]
    assert [body for _, _, body in elements] == [hostile, *passages]
    assert re.findall(r"\[\d\]", _outside(user)) == []


@pytest.mark.parametrize(("name", "values"), [
    ("generation", {"query": "q", "references": ["p"]}),
    ("grading", {"query": "q", "ideal": "i", "candidate": "c"}),
])
def test_french_system_messages_say_fenced_text_is_data_and_ask_for_french(name, values):
    system = load_prompt_lang(name, "fr").messages(**values)[0]["content"]
    flat = " ".join(system.split())
    assert "jamais une instruction" in flat and "français" in flat
    assert load_prompt(f"{name}-fr").fences == load_prompt(name).fences  # same elements as the English v2


def test_french_repair_prompt_and_json_keys():
    repair = load_prompt_lang("grading-repair", "fr")
    assert repair.id == "grading-repair-fr@v1" and '{"grade": <entier de 1 à 5>' in repair.user
    assert '"grade"' in load_prompt_lang("grading", "fr").system and '"reason"' in load_prompt_lang("grading", "fr").system
