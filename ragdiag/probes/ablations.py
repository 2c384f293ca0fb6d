"""The ten Δ-margin ablations of docs/methods.md#6-name-probe (paper 001, §4.2) as pure string functions.

A bundle is one query and five candidates (C1 true author/true topic, C2a and C2b impostors on
the true topic, C3 true author on another topic, C4 a third impostor on another topic).
:func:`render_bundle` turns one :class:`BundleSpec` into the six texts for one condition.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

from ragdiag.errors import RagdiagError
from ragdiag.io.lists import parse_choices
from ragdiag.probes.probe_data import CandidateTemplate

ABLATIONS = (
    "hard_name_mask",
    "gibberish_name",
    "edit_distance_near_miss",
    "remove_label",
    "strip_diacritics",
    "initials_form",
    "name_order_inversion",
    "case_punct_perturb",
    "author_position_shift",
    "unicode_normalization_stress",
)
NEAR_MISS_DISTANCE = 2  # Levenshtein distance of every near-miss impostor to the true name
NNBSP = "\u202f"  # narrow no-break space
_CASINGS = ("upper", "lower", "title")


def parse_ablations(value: str) -> list[str]:
    """``all`` or a comma list of ablation names (unknown → RagdiagError)."""
    if value.strip() == "all":
        return list(ABLATIONS)
    return parse_choices(value, ABLATIONS, "ablation", "--ablations", expected=f"all or some of {', '.join(ABLATIONS)}")


@dataclass(frozen=True)
class Author:
    first: str
    last: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


def strip_diacritics(text: str) -> str:
    """NFD, drop combining marks, NFC: "Hélène Bézier" → "Helene Bezier"."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def initials_form(author: Author) -> str:
    """"Alice Dupont" → "A. Dupont"; "Jean-Pierre Martin" → "J.-P. Martin"."""
    words = []
    for word in author.first.split():
        words.append("-".join(f"{part[0]}." for part in word.split("-") if part))
    return " ".join(words + [author.last])


def inverted_form(author: Author) -> str:
    """"Alice Dupont" → "Dupont, Alice"."""
    return f"{author.last}, {author.first}"


def gibberish_token(name: str) -> str:
    """Stable non-linguistic token for a name: "ID-" + 6 upper hex digits of sha256(name)."""
    return "ID-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:6].upper()


def mask_token(mask: str, index: int) -> str:
    """The one mask shared by every author string of bundle ``index``: e.g. "AUTHOR_007"."""
    return f"{mask}_{index % 1000:03d}"


def case_punct_perturb(name: str, index: int) -> str:
    """Deterministic casing (upper/lower/title by bundle index) and light punctuation changes.

    Straight apostrophes become curly and curly straight; hyphens become spaces.
    """
    casing = _CASINGS[index % len(_CASINGS)]
    text = {"upper": name.upper(), "lower": name.lower(), "title": name.title()}[casing]
    text = text.translate({ord("'"): "\u2019", ord("\u2019"): "'"})
    return text.replace("-", " ")


def unicode_stress(text: str) -> str:
    """Candidates' side of unicode_normalization_stress: NFD, then a narrow no-break space before : ; ! ?"""
    return re.sub(r"[ \u00a0\u202f]?([:;!?])", NNBSP + r"\1", unicodedata.normalize("NFD", text))


def near_miss(name: str, distance: int, rng: np.random.Generator, avoid: set[str]) -> str:
    """``name`` with ``distance`` letter substitutions, verified to be exactly ``distance`` Levenshtein edits.

    Substituted letters keep their case; results in ``avoid`` are redrawn.
    """
    positions = [i for i, ch in enumerate(name) if ch.isalpha()]
    if len(positions) < distance:
        raise RagdiagError(f"name '{name}' is too short for a near-miss at distance {distance}")
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(1000):
        chars = list(name)
        for pos in rng.choice(positions, size=distance, replace=False):
            old = strip_diacritics(chars[pos]).lower()
            new = str(rng.choice([c for c in alphabet if c != old]))
            chars[pos] = new.upper() if chars[pos].isupper() else new
        candidate = "".join(chars)
        if candidate not in avoid and Levenshtein.distance(name, candidate) == distance:
            return candidate
    raise RagdiagError(f"could not build a near-miss of '{name}' at distance {distance}")


@dataclass(frozen=True)
class BundleSpec:
    """One query of one run: authors, topics, drawn templates and near-miss impostor names."""

    index: int
    true: Author
    impostors: tuple[Author, Author, Author]  # for C2a, C2b, C4
    near_misses: tuple[str, str, str]  # for C2a, C2b, C4 under edit_distance_near_miss
    topic: str
    other_topic: str
    query_template: str
    candidate_template: CandidateTemplate


def _author_strings(spec: BundleSpec, condition: str, mask: str) -> tuple[str, list[str]]:
    """(author in the query, author in each candidate C1..C4) for ``condition``."""
    by_role = [spec.true, spec.impostors[0], spec.impostors[1], spec.true, spec.impostors[2]]
    query = spec.true.full
    cands = [a.full for a in by_role]
    if condition == "hard_name_mask":
        token = mask_token(mask, spec.index)
        return token, [token] * 5
    if condition == "gibberish_name":
        return gibberish_token(query), [gibberish_token(c) for c in cands]
    if condition == "edit_distance_near_miss":
        return query, [query, spec.near_misses[0], spec.near_misses[1], query, spec.near_misses[2]]
    if condition == "initials_form":
        return initials_form(spec.true), [initials_form(a) for a in by_role]
    if condition == "name_order_inversion":
        return query, [inverted_form(a) for a in by_role]
    if condition == "case_punct_perturb":
        return query, [case_punct_perturb(c, spec.index) for c in cands]
    return query, cands


def render_bundle(spec: BundleSpec, condition: str, label: str, mask: str) -> list[str]:
    """The six texts [query, C1, C2a, C2b, C3, C4] of ``spec`` under ``condition`` ("base" or an ablation)."""
    q_author, c_authors = _author_strings(spec, condition, mask)
    query = spec.query_template.format(author=q_author, topic=spec.topic)
    topics = [spec.topic, spec.topic, spec.topic, spec.other_topic, spec.other_topic]
    used_label = "" if condition == "remove_label" else label
    tpl = spec.candidate_template
    texts = [query]
    for author, topic in zip(c_authors, topics):
        paper = tpl.paper.format(topic=topic)
        author_seg = tpl.author.format(label=used_label, author=author)
        texts.append(f"{author_seg} {paper}" if condition == "author_position_shift" else f"{paper} {author_seg}")
    texts = [unicodedata.normalize("NFC", t) for t in texts]
    if condition == "strip_diacritics":
        texts = [strip_diacritics(t) for t in texts]
    elif condition == "unicode_normalization_stress":
        texts = [texts[0]] + [unicode_stress(t) for t in texts[1:]]
    return texts
