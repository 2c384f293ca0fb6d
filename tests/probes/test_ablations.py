"""Every Δ-margin ablation on concrete strings, EN and FR (no model needed)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from ragdiag.errors import RagdiagError
from ragdiag.probes import ablations as ab
from ragdiag.probes.ablations import ABLATIONS, Author, BundleSpec, render_bundle
from ragdiag.probes.names import build_specs, build_texts
from ragdiag.probes.probe_data import CandidateTemplate, load_name_templates

EN_TPL = CandidateTemplate("Research paper: '{topic}'.", "{label}{author}.")
FR_TPL = CandidateTemplate("Article de recherche : « {topic} ».", "{label}{author}.")


def _spec(lang: str) -> BundleSpec:
    if lang == "en":
        return BundleSpec(
            index=7,
            true=Author("Alice", "O'Neil-Dupont"),
            impostors=(Author("Bob", "Smith"), Author("Carol", "Jones"), Author("Dan", "Brown")),
            near_misses=("Alice O'Neal-Dupont", "Alice O'Neil-Dupomt", "Alixe O'Neil-Dupont"),
            topic="ocean acidification",
            other_topic="dark matter",
            query_template="Which works by {author} on {topic}?",
            candidate_template=EN_TPL,
        )
    return BundleSpec(
        index=4,
        true=Author("Hélène", "Bézier"),
        impostors=(Author("Émile", "Zola"), Author("Chloé", "Mercier"), Author("Noël", "Faure")),
        near_misses=("Hélène Bézuer", "Hélène Bfzier", "Hélpne Bézier"),
        topic="rythmes circadiens",
        other_topic="matière noire",
        query_template="Quels travaux publiés par {author} sur {topic} ?",
        candidate_template=FR_TPL,
    )


LABEL = {"en": "Author: ", "fr": "Auteur : "}
MASK = {"en": "AUTHOR", "fr": "AUTEUR"}


def _render(lang: str, condition: str) -> list[str]:
    return render_bundle(_spec(lang), condition, LABEL[lang], MASK[lang])


def test_base_bundle_en_matches_methods_templates():
    q, c1, c2a, c2b, c3, c4 = _render("en", "base")
    assert q == "Which works by Alice O'Neil-Dupont on ocean acidification?"
    assert c1 == "Research paper: 'ocean acidification'. Author: Alice O'Neil-Dupont."
    assert c2a == "Research paper: 'ocean acidification'. Author: Bob Smith."
    assert c2b == "Research paper: 'ocean acidification'. Author: Carol Jones."
    assert c3 == "Research paper: 'dark matter'. Author: Alice O'Neil-Dupont."
    assert c4 == "Research paper: 'dark matter'. Author: Dan Brown."


def test_base_bundle_fr_is_nfc_with_french_label():
    q, c1, *_ = _render("fr", "base")
    assert c1 == "Article de recherche : « rythmes circadiens ». Auteur : Hélène Bézier."
    assert all(unicodedata.is_normalized("NFC", t) for t in (q, c1))


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_hard_name_mask_gives_one_token_everywhere(lang):
    texts = _render(lang, "hard_name_mask")
    token = f"{MASK[lang]}_007" if lang == "en" else f"{MASK[lang]}_004"
    assert token in texts[0]
    assert texts[1] == texts[2] == texts[3]  # C1, C2a, C2b identical → Δ_name = 0 exactly
    assert all(token in t for t in texts[1:])
    assert not any(a in " ".join(texts) for a in ("Alice", "Bob", "Hélène", "Émile"))


def test_gibberish_is_stable_and_consistent():
    texts = _render("fr", "gibberish_name")
    token = ab.gibberish_token("Hélène Bézier")
    assert token.startswith("ID-") and len(token) == 9 and token == ab.gibberish_token("Hélène Bézier")
    assert token in texts[0] and token in texts[1] and token in texts[4]
    assert ab.gibberish_token("Émile Zola") in texts[2]
    assert token not in texts[2] and token not in texts[3]


def test_near_miss_has_exact_levenshtein_distance():
    rng = np.random.default_rng(3)
    for name in ("Alice Dupont", "Hélène Bézier", "Jean-Pierre Le Gall"):
        seen: set[str] = set()
        for _ in range(20):
            miss = ab.near_miss(name, 2, rng, {name, *seen})
            assert Levenshtein.distance(name, miss) == 2
            assert miss != name and miss not in seen and len(miss) == len(name)
            seen.add(miss)
    with pytest.raises(RagdiagError, match="too short"):
        ab.near_miss("A B", 3, rng, set())


def test_near_miss_bundle_changes_impostors_only():
    texts = _render("en", "edit_distance_near_miss")
    base = _render("en", "base")
    assert texts[0] == base[0] and texts[1] == base[1] and texts[4] == base[4]
    assert texts[2].endswith("Author: Alice O'Neal-Dupont.")
    assert texts[5].endswith("Author: Alixe O'Neil-Dupont.")


def test_built_specs_use_distance_two_near_misses():
    tpl = load_name_templates("fr")
    for row in build_specs("fr", 5, 2, 11, tpl):
        for spec in row:
            assert len(set(spec.near_misses)) == 3
            assert all(Levenshtein.distance(spec.true.full, m) == ab.NEAR_MISS_DISTANCE for m in spec.near_misses)


@pytest.mark.parametrize(("lang", "labelled", "bare"), [("en", "Author: ", ""), ("fr", "Auteur : ", "")])
def test_remove_label_both_languages(lang, labelled, bare):
    texts = _render(lang, "remove_label")
    assert all(labelled not in t for t in texts)
    base = _render(lang, "base")
    assert texts[1] == base[1].replace(labelled, bare)
    assert texts[0] == base[0]


def test_strip_diacritics_nfd_drop_marks_nfc():
    assert ab.strip_diacritics("Hélène Bézier, Noël, façade") == "Helene Bezier, Noel, facade"
    nfd = unicodedata.normalize("NFD", "Émile")
    assert ab.strip_diacritics(nfd) == "Emile"
    texts = _render("fr", "strip_diacritics")
    assert texts[0] == "Quels travaux publies par Helene Bezier sur rythmes circadiens ?"
    assert texts[4] == "Article de recherche : « matiere noire ». Auteur : Helene Bezier."


def test_initials_form():
    assert ab.initials_form(Author("Alice", "Dupont")) == "A. Dupont"
    assert ab.initials_form(Author("Jean-Pierre", "Le Gall")) == "J.-P. Le Gall"
    assert ab.initials_form(Author("Mary Ann", "Smith")) == "M. A. Smith"
    texts = _render("fr", "initials_form")
    assert "par H. Bézier sur" in texts[0] and texts[1].endswith("Auteur : H. Bézier.")
    assert texts[2].endswith("Auteur : É. Zola.")


def test_name_order_inversion_candidates_only():
    texts = _render("en", "name_order_inversion")
    assert texts[0] == _render("en", "base")[0]
    assert texts[1].endswith("Author: O'Neil-Dupont, Alice.")
    assert texts[2].endswith("Author: Smith, Bob.")


def test_case_punct_perturb_casing_and_punctuation():
    assert ab.case_punct_perturb("Alice O'Neil-Dupont", 0) == "ALICE O\u2019NEIL DUPONT"
    assert ab.case_punct_perturb("Alice O\u2019Neil-Dupont", 1) == "alice o'neil dupont"
    assert ab.case_punct_perturb("hélène bézier", 2) == "Hélène Bézier"
    texts = _render("en", "case_punct_perturb")  # index 7 → lower
    assert texts[0] == _render("en", "base")[0]
    assert texts[1].endswith("Author: alice o\u2019neil dupont.")


def test_author_position_shift_puts_author_first():
    assert _render("en", "author_position_shift")[1] == "Author: Alice O'Neil-Dupont. Research paper: 'ocean acidification'."
    assert _render("fr", "author_position_shift")[3] == "Auteur : Chloé Mercier. Article de recherche : « rythmes circadiens »."


def test_unicode_normalization_stress_nfc_query_nfd_candidates_nnbsp():
    q, c1, *_ = _render("fr", "unicode_normalization_stress")
    assert unicodedata.is_normalized("NFC", q) and q == _render("fr", "base")[0]
    assert unicodedata.is_normalized("NFD", c1) and not unicodedata.is_normalized("NFC", c1)
    assert c1.count(ab.NNBSP) == 2 and "Auteur\u202f:" in c1 and " :" not in c1
    assert unicodedata.normalize("NFC", c1.replace("\u202f", " ")) == _render("fr", "base")[1]
    en = _render("en", "unicode_normalization_stress")[1]
    assert en == "Research paper\u202f: 'ocean acidification'. Author\u202f: Alice O'Neil-Dupont."
    assert ab.unicode_stress("Vraiment ! Oui; non?") == "Vraiment\u202f! Oui\u202f; non\u202f?"


def test_parse_ablations():
    assert ab.parse_ablations("all") == list(ABLATIONS)
    assert ab.parse_ablations("remove_label, hard_name_mask") == ["remove_label", "hard_name_mask"]
    with pytest.raises(RagdiagError, match="unknown ablation 'nope'"):
        ab.parse_ablations("remove_label,nope")


def test_build_texts_dedupes_and_is_deterministic():
    a = build_texts("en", 4, 3, 5, ["hard_name_mask", "strip_diacritics"])
    b = build_texts("en", 4, 3, 5, ["hard_name_mask", "strip_diacritics"])
    assert a.unique == b.unique and np.array_equal(a.index, b.index)
    assert a.index.shape == (3, 3, 4, 5) and len(a.unique) < a.total
    # English names carry no diacritics here, so strip_diacritics reuses base texts entirely
    assert np.array_equal(a.index[:, 2], a.index[:, 0])
    # true authors and topics are fixed across runs; impostors are fresh each run
    specs = build_specs("en", 4, 3, 5, load_name_templates("en"))
    assert len({s.true for s in (r[0] for r in specs)}) == 1
    assert len({s.impostors for s in (r[0] for r in specs)}) == 3


def test_fr_faker_names_carry_diacritics():
    specs = build_specs("fr", 40, 1, 0, load_name_templates("fr"))[0]
    names = " ".join(s.true.full + " " + " ".join(a.full for a in s.impostors) for s in specs)
    assert any(ch in names for ch in "éèêëïîôçÉÈ")
