"""Which language a question is in (English or French), for ``--lang auto``: a small dependency-free scorer.

Score per language = number of the text's words that are frequent function words of that language
(articles, prepositions, pronouns, question words; lists below) + for French, 1 per word carrying a
French diacritic (é è ê ë à â î ï ô û ù ç œ) or an elided article/pronoun (``l'``, ``d'``, ``qu'`` …).
French is chosen when its score is higher than English's; otherwise English (also when neither
language has any evidence, e.g. a bare name or a number — the reason says so).

Words common to both languages (``on``, ``a``, ``me``, ``six``) are in neither list. Accuracy on real
queries (French Service-Public questions, English SciFact claims and MS MARCO queries) is measured by
``tests/llm/test_language.py`` and reported in the README.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

LANGS = ("en", "fr")
LANG_CHOICES = ("auto", *LANGS)

_FRENCH = frozenset("""
le la les un une des du de au aux et ou où est sont être été sera ont avoir avez peut peuvent doit doivent
faut faire fait pour par sur sous dans avec sans chez entre vers que qui quoi quel quelle quels quelles
ce cet cette ces son sa ses leur leurs mon ma mes ton ta tes notre nos votre vos il elle ils elles nous vous
je tu ne pas plus moins comment pourquoi quand combien lorsque si aussi tout tous toute toutes même
quelles-sont quels-sont est-ce est-il est-elle peut-on doit-on faut-il y en
""".split())  # noqa: SIM905 - a word list reads best as text

_ENGLISH = frozenset("""
the of and to in is are was were be been being for with what how why when which who whom whose does do did
can could should would will shall may might must an that this these those it its by from as at or not
there their they them his her he she we you your our my than then into about after before between
have has had if so no yes any all some more most other such only also very just where while during
""".split())  # noqa: SIM905 - a word list reads best as text

_DIACRITIC = re.compile(r"[éèêëàâîïôûùçœ]")
_ELISION = re.compile(r"^(?:l|d|qu|c|n|s|j|m|t|jusqu|lorsqu|puisqu)['’]\w", re.IGNORECASE)
_WORD = re.compile(r"[\w'’-]+")


@dataclass(frozen=True)
class Detected:
    """The chosen language, both scores and a short reason (shown to the user)."""

    lang: str
    french: int
    english: int

    @property
    def reason(self) -> str:
        if self.french == self.english == 0:
            return "no French or English function words: English by default"
        return f"French score {self.french}, English score {self.english}"


def detect(text: str) -> Detected:
    """English or French for ``text`` by the function-word and diacritic scores above."""
    text = unicodedata.normalize("NFC", text).lower()
    french = english = 0
    for word in _WORD.findall(text):
        bare = word.strip("'’-")
        if _ELISION.match(bare):
            french += 1
            bare = re.split(r"['’]", bare, maxsplit=1)[1]
        french += bare in _FRENCH
        english += bare in _ENGLISH
        french += bool(_DIACRITIC.search(bare))
    return Detected("fr" if french > english else "en", french, english)


def choose_lang(setting: str, text: str) -> str:
    """``setting`` (en, fr or auto) resolved for one question."""
    return detect(text).lang if setting == "auto" else setting
