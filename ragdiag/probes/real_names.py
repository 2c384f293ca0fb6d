"""Proper names in real queries, and the ablations applied to them (paper 001 §4.5 on a user's own
queries; the synthetic probe is :mod:`ragdiag.probes.names`).

Detection, case-insensitive, from faker's person-name lists of the language (``en_US``/``en_GB``
or ``fr_FR``) plus any names the user lists:

- a run of two or more words whose first word is a first name and whose last word is a last name
  ("james cook", "Jean-Pierre Martin"), middle words being first names, last names or initials;
- a capitalised word that is not the query's first word and is a first or last name, with the
  capitalised words right next to it ("who painted the Mona Lisa" → no; "books by Tolkien" needs
  Tolkien in the lists or ``--names``);
- any name from ``--names`` (whole words).

Ablations of each detected span: ``mask`` (the one token NAME / NOM), ``gibberish`` (ID-XXXXXX from
the sha256 of the name, as the synthetic probe's gibberish_name), ``replace`` (another person's name
from faker for the language, drawn with the seed). Queries without a name are left out of the
comparison and counted.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ABLATIONS = ("mask", "gibberish", "replace")
MASK_TOKEN = {"en": "NAME", "fr": "NOM"}
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*\.?", re.UNICODE)
_LOCALES = {"en": ("en_US", "en_GB"), "fr": ("fr_FR",)}


@dataclass(frozen=True)
class NameLists:
    first: frozenset[str]
    last: frozenset[str]
    extra: tuple[str, ...] = ()


def name_lists(lang: str, extra: Iterable[str] = ()) -> NameLists:
    """First and last names of faker's locales for ``lang`` (lower case), plus ``extra`` names."""
    import importlib

    first: set[str] = set()
    last: set[str] = set()
    for locale in _LOCALES[lang]:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        first.update(n.lower() for n in provider.first_names)
        last.update(n.lower() for n in provider.last_names)
    return NameLists(frozenset(first), frozenset(last), tuple(sorted({e.strip() for e in extra if e.strip()},
                                                                     key=len, reverse=True)))


def _is_initial(word: str) -> bool:
    return len(word.rstrip(".")) == 1 and word[0].isalpha()


def find_names(text: str, lists: NameLists) -> list[tuple[int, int]]:
    """Character spans of the names in ``text``, in order, not overlapping."""
    spans: list[tuple[int, int]] = []
    for extra in lists.extra:
        for match in re.finditer(rf"(?<!\w){re.escape(extra)}(?!\w)", text, flags=re.IGNORECASE):
            spans.append(match.span())
    words = list(_WORD.finditer(text))
    low = [w.group(0).rstrip(".").lower() for w in words]
    i = 0
    while i < len(words):
        if low[i] in lists.first:
            j = i + 1
            while j < len(words) and (low[j] in lists.first or _is_initial(words[j].group(0))) and j + 1 < len(words):
                j += 1
            if j < len(words) and j > i and low[j] in lists.last:
                spans.append((words[i].start(), words[j].end()))
                i = j + 1
                continue
        word = words[i].group(0)
        if i > 0 and word[0].isupper() and (low[i] in lists.first or low[i] in lists.last):
            start, end = i, i
            while start > 1 and words[start - 1].group(0)[0].isupper():
                start -= 1
            while end + 1 < len(words) and words[end + 1].group(0)[0].isupper():
                end += 1
            spans.append((words[start].start(), words[end].end()))
            i = end + 1
            continue
        i += 1
    spans.sort()
    merged: list[tuple[int, int]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], span[1]))
        else:
            merged.append(span)
    return merged


def _gibberish(name: str) -> str:
    return "ID-" + hashlib.sha256(name.lower().encode("utf-8")).hexdigest()[:6].upper()


def ablate(text: str, spans: Sequence[tuple[int, int]], ablation: str, lang: str, replacement) -> str:
    """``text`` with every span replaced as ``ablation`` says (``replacement(name)`` for replace)."""
    out, last = [], 0
    for start, end in spans:
        name = text[start:end]
        new = {"mask": lambda _: MASK_TOKEN[lang], "gibberish": _gibberish, "replace": replacement}[ablation](name)
        out += [text[last:start], new]
        last = end
    return "".join(out) + text[last:]


def replacer(lang: str, seed: int):
    """A function giving, per distinct name, another faker name of the language (stable per name)."""
    from faker import Faker

    fake = Faker(list(_LOCALES[lang]))
    fake.seed_instance(seed)
    chosen: dict[str, str] = {}

    def replacement(name: str) -> str:
        key = name.lower()
        if key not in chosen:
            candidate = f"{fake.first_name()} {fake.last_name()}"
            while candidate.lower() == key:
                candidate = f"{fake.first_name()} {fake.last_name()}"
            chosen[key] = candidate
        return chosen[key]

    return replacement
