"""Bundled probe data (``probes/``) and user query files, loaded and validated.

Files: ``probes/names/topics_{lang}.txt``, ``probes/names/templates_{lang}.json``,
``probes/noise/bank_{lang}.json``, ``probes/noise/levels.json``,
``probes/noise/queries_{lang}.jsonl``. Every loader names the file, record and field on error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import DataError
from ragdiag.io.files import file_sha256
from ragdiag.io.jsonl import read_json_records
from ragdiag.io.lists import parse_choices
from ragdiag.resources import resource_path

LANGS = ("en", "fr")
NOISE_COMPONENTS = ("greetings", "fillers", "digressions", "personal_context", "emoji", "casing")
CASING_STYLES = ("lower", "lower_no_question_mark")


def parse_langs(value: str) -> list[str]:
    """``en``, ``fr`` or ``en,fr`` → list of language codes (unknown → RagdiagError)."""
    return parse_choices(value.lower(), LANGS, "language", "--lang", expected="en, fr or en,fr")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: invalid JSON: {err}") from None


@dataclass(frozen=True)
class CandidateTemplate:
    """A candidate's two segments; ``{label}`` precedes the author and is dropped by remove_label."""

    paper: str
    author: str


@dataclass(frozen=True)
class NameTemplates:
    """Templates of one language for the Δ-margin name probe (docs/methods.md#6-name-probe)."""

    lang: str
    query_templates: tuple[str, ...]
    candidate_templates: tuple[CandidateTemplate, ...]
    label: str
    mask: str
    topics: tuple[str, ...]
    files: dict[str, str]  # file name → sha256


def load_name_templates(lang: str) -> NameTemplates:
    """Templates and topics for ``lang``; at least 3 variants of each template and 50 topics."""
    tpath = resource_path("probes", "names", f"templates_{lang}.json")
    topics_path = resource_path("probes", "names", f"topics_{lang}.txt")
    raw = _read_json(tpath)
    queries = raw.get("query_templates")
    if not isinstance(queries, list) or len(queries) < 3:
        raise DataError.at(str(tpath), None, "query_templates", "need a list of at least 3 templates")
    for i, q in enumerate(queries):
        if not isinstance(q, str) or "{author}" not in q or "{topic}" not in q:
            raise DataError.at(str(tpath), i, "query_templates", "needs {author} and {topic}")
    cands = raw.get("candidate_templates")
    if not isinstance(cands, list) or len(cands) < 3:
        raise DataError.at(str(tpath), None, "candidate_templates", "need a list of at least 3 templates")
    parsed = []
    for i, c in enumerate(cands):
        if not isinstance(c, dict) or "{topic}" not in str(c.get("paper")) or "{author}" not in str(c.get("author")):
            raise DataError.at(str(tpath), i, "candidate_templates", "needs 'paper' with {topic} and 'author' with {author}")
        parsed.append(CandidateTemplate(c["paper"], c["author"]))
    for key in ("label", "mask"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise DataError.at(str(tpath), None, key, "missing or empty")
    try:
        lines = topics_path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{topics_path}: file not found") from None
    topics = tuple(dict.fromkeys(t.strip() for t in lines if t.strip() and not t.startswith("#")))
    if len(topics) < 50:
        raise DataError(f"{topics_path}: {len(topics)} topics, need at least 50")
    files = {tpath.name: file_sha256(tpath), topics_path.name: file_sha256(topics_path)}
    return NameTemplates(lang, tuple(queries), tuple(parsed), raw["label"], raw["mask"], topics, files)


@dataclass(frozen=True)
class NoiseLevel:
    level: int
    name: str
    components: tuple[str, ...]


@dataclass(frozen=True)
class NoiseBank:
    """Phrase bank of one language plus the level definitions (docs/methods.md#7-noise-probe)."""

    lang: str
    phrases: dict[str, tuple[str, ...]]
    levels: dict[int, NoiseLevel]
    prefix_order: tuple[str, ...]
    suffix_order: tuple[str, ...]
    files: dict[str, str]


def load_noise_bank(lang: str) -> NoiseBank:
    """Phrase bank ``bank_{lang}.json`` and ``levels.json``, validated."""
    bpath = resource_path("probes", "noise", f"bank_{lang}.json")
    lpath = resource_path("probes", "noise", "levels.json")
    bank, lev = _read_json(bpath), _read_json(lpath)
    phrases: dict[str, tuple[str, ...]] = {}
    for comp in NOISE_COMPONENTS:
        items = bank.get(comp)
        if not isinstance(items, list) or not items or not all(isinstance(s, str) and s.strip() for s in items):
            raise DataError.at(str(bpath), None, comp, "need a non-empty list of strings")
        phrases[comp] = tuple(items)
    for style in phrases["casing"]:
        if style not in CASING_STYLES:
            raise DataError.at(str(bpath), None, "casing", f"unknown style '{style}' (known: {', '.join(CASING_STYLES)})")
    levels: dict[int, NoiseLevel] = {}
    for i, spec in enumerate(lev.get("levels", [])):
        comps = tuple(spec.get("components", []))
        unknown = [c for c in comps if c not in NOISE_COMPONENTS]
        if unknown or not isinstance(spec.get("level"), int):
            raise DataError.at(str(lpath), i, "components", f"unknown component(s) {unknown} or missing level")
        levels[spec["level"]] = NoiseLevel(spec["level"], str(spec.get("name", "")), comps)
    if 0 not in levels or levels[0].components:
        raise DataError.at(str(lpath), None, "levels", "level 0 must exist and add no noise")
    files = {bpath.name: file_sha256(bpath), lpath.name: file_sha256(lpath)}
    return NoiseBank(lang, phrases, levels, tuple(lev.get("prefix_order", ())), tuple(lev.get("suffix_order", ())), files)


@dataclass(frozen=True)
class ProbeQuery:
    """A clean information-seeking query with an optional reference passage."""

    id: str
    query: str
    reference: str | None


def load_queries(path: Path) -> list[ProbeQuery]:
    """Queries from a JSONL (or JSON list) file: objects with ``query`` and optional ``id``, ``reference``,
    or BEIR queries (``_id``, ``text``; no reference, so only the cosine to the clean query is measured)."""
    path = Path(path)
    out: list[ProbeQuery] = []
    for i, rec in enumerate(read_json_records(path)):
        if not isinstance(rec, dict):
            raise DataError.at(str(path), i, None, "expected a JSON object")
        beir = "query" not in rec and "text" in rec
        query, ref = rec.get("text" if beir else "query"), rec.get("reference")
        if not isinstance(query, str) or not query.strip():
            raise DataError.at(str(path), i, "text" if beir else "query",
                               "missing or empty (expected {query, reference} or BEIR {_id, text})")
        if ref is not None and (not isinstance(ref, str) or not ref.strip()):
            raise DataError.at(str(path), i, "reference", "must be a non-empty string")
        out.append(ProbeQuery(str(rec.get("id", rec.get("_id", f"q{i}"))), query.strip(), ref))
    if not out:
        raise DataError(f"{path}: no queries (expected JSON lines with a 'query' field, or BEIR '_id' and 'text')")
    return out


def bundled_queries_path(lang: str) -> Path:
    return resource_path("probes", "noise", f"queries_{lang}.jsonl")
