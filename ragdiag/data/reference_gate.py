"""Reference-quality gate: find degenerate answers before they are graded or correlated.

An answer is degenerate (docs/methods.md, "Reference-quality gate") when it is, in this order:

- ``empty``: empty or only whitespace;
- ``truncated``: the generation stopped at its output limit (``finish_reason: length``; the reply
  carries :data:`TRUNCATED_MARK`, see :mod:`ragdiag.llm.output_limit`): never a complete answer;
- ``refusal``: its first sentence matches a refusal pattern ("The references are insufficient …",
  "je ne peux pas répondre …");
- ``prompt_echo``: it repeats the prompt's fencing (``<question>``, "the text inside the …");
- ``question_copy``: it only repeats the question — every word of the answer is a word of the
  question and it holds at least half of the question's distinct words (words: lower-cased
  ``\\w+`` runs);
- ``too_long``: it has more than ``N ×`` the median length (characters) of the answers of its kind
  (ideal answers against ideal answers, top-K answers against top-K answers).

The patterns are case-insensitive regular expressions kept per kind and language in the versioned
file ``prompts/degenerate-patterns.v<N>.json``; ``--degenerate-patterns FILE`` adds the patterns of
a file with the same layout. All languages' patterns apply unless ``languages`` narrows them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import DataError, RagdiagError
from ragdiag.resources import resource_path

KINDS = ("empty", "truncated", "refusal", "prompt_echo", "question_copy", "too_long")
TRUNCATED_MARK = "[ragdiag: answer cut at the output limit"  # the line a reply that hit its limit ends with
PATTERN_KINDS = ("refusal", "prompt_echo")
PATTERNS_NAME = "degenerate-patterns"
PATTERNS_VERSION = 1
DEFAULT_LONG_RATIO = 5.0
LONG_RATIO_RANGE = (1.5, 1000.0)
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")


@dataclass(frozen=True)
class GatePatterns:
    """Compiled patterns per kind (all chosen languages together) and where they came from."""

    refusal: tuple[re.Pattern[str], ...]
    prompt_echo: tuple[re.Pattern[str], ...]
    source: str  # e.g. "degenerate-patterns@v1" or "degenerate-patterns@v1+extra.json(sha256:ab12…)"


def _read_pattern_file(path: Path) -> dict[str, dict[str, list[str]]]:
    """The ``{kind: {language: [regex, …]}}`` lists of a patterns file, each regex compiled once to check it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DataError(f"{path}: not a readable JSON patterns file ({err})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object with '{PATTERN_KINDS[0]}' and/or '{PATTERN_KINDS[1]}' lists")
    unknown = [k for k in data if k not in (*PATTERN_KINDS, "name", "version", "about")]
    if unknown:
        raise DataError(f"{path}: unknown key '{unknown[0]}' (expected {', '.join(PATTERN_KINDS)}, name, version, about)")
    lists: dict[str, dict[str, list[str]]] = {}
    for kind in PATTERN_KINDS:
        by_lang = data.get(kind, {})
        if not isinstance(by_lang, dict):
            raise DataError(f"{path}: '{kind}' must map a language code (en, fr, …) to a list of patterns")
        for lang, patterns in by_lang.items():
            if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
                raise DataError(f"{path}: '{kind}.{lang}' must be a list of non-empty strings")
            for number, pattern in enumerate(patterns, start=1):
                try:
                    re.compile(pattern, re.IGNORECASE)
                except re.error as err:
                    raise DataError(f"{path}: '{kind}.{lang}' pattern {number} ({pattern!r}) is not a regular "
                                    f"expression: {err}") from None
            lists.setdefault(kind, {})[lang] = list(patterns)
    return lists


def bundled_patterns_path(version: int = PATTERNS_VERSION) -> Path:
    return resource_path("prompts", f"{PATTERNS_NAME}.v{version}.json")


@functools.cache
def _bundled_lists() -> dict[str, dict[str, list[str]]]:
    """The bundled patterns file, read once per process (the package's files do not change while it runs, and
    a triage's cost pass makes one gate per query); read-only."""
    return _read_pattern_file(bundled_patterns_path())


def load_patterns(extra: Path | None = None, languages: Sequence[str] | None = None) -> GatePatterns:
    """The bundled patterns, plus those of ``extra``, for ``languages`` (default: every language listed)."""
    lists = [_bundled_lists()]
    source = f"{PATTERNS_NAME}@v{PATTERNS_VERSION}"
    if extra is not None:
        lists.append(_read_pattern_file(extra))
        digest = hashlib.sha256(Path(extra).read_bytes()).hexdigest()[:12]
        source += f"+{Path(extra).name}(sha256:{digest})"
    compiled: dict[str, list[re.Pattern[str]]] = {kind: [] for kind in PATTERN_KINDS}
    for data in lists:
        for kind in PATTERN_KINDS:
            for lang, patterns in data.get(kind, {}).items():
                if languages is None or lang in languages:
                    compiled[kind].extend(re.compile(p, re.IGNORECASE) for p in patterns)
    return GatePatterns(tuple(compiled["refusal"]), tuple(compiled["prompt_echo"]), source)


def check_long_ratio(ratio: float) -> float:
    lo, hi = LONG_RATIO_RANGE
    if not (isinstance(ratio, (int, float)) and lo <= ratio <= hi):
        raise RagdiagError(f"--long-answer-ratio must be between {lo} and {hi}, got {ratio}")
    return float(ratio)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def first_sentence(text: str) -> str:
    """The text up to the first sentence end (., ! or ? followed by a space) or line break."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def copies_question(answer: str, question: str) -> bool:
    """Every word of ``answer`` is a word of ``question``, and it holds at least half of the question's words."""
    answer_words, question_words = set(_words(answer)), set(_words(question))
    if not answer_words or not question_words:
        return False
    return answer_words <= question_words and len(answer_words) >= len(question_words) / 2


def degenerate_kind(answer: str | None, question: str | None, patterns: GatePatterns,
                    median_chars: float | None = None, long_ratio: float = DEFAULT_LONG_RATIO) -> str | None:
    """The first kind in :data:`KINDS` that ``answer`` shows, or None for a usable answer.

    A missing answer (None: the call failed) is not judged here; it is reported as missing elsewhere.
    """
    if answer is None:
        return None
    if not answer.strip():
        return "empty"
    if TRUNCATED_MARK in answer:
        return "truncated"
    head = first_sentence(answer)
    if any(p.search(head) for p in patterns.refusal):
        return "refusal"
    if any(p.search(answer) for p in patterns.prompt_echo):
        return "prompt_echo"
    if question and copies_question(answer, question):
        return "question_copy"
    if median_chars and len(answer.strip()) > long_ratio * median_chars:
        return "too_long"
    return None


def median_length(answers: Iterable[str | None]) -> float | None:
    """Median length in characters of the non-empty answers (None when there are none)."""
    lengths = [len(a.strip()) for a in answers if a is not None and a.strip()]
    return float(statistics.median(lengths)) if lengths else None


@dataclass(frozen=True)
class ReferenceGate:
    """Patterns and the long-answer ratio, applied to a set of answers of one kind."""

    patterns: GatePatterns
    long_ratio: float = DEFAULT_LONG_RATIO

    def classify(self, answers: Sequence[str | None], questions: Sequence[str | None]) -> list[str | None]:
        """The degenerate kind (or None) of each answer, the median taken over these answers; each distinct
        (answer, question) pair is judged once (the kind depends on nothing else)."""
        median = median_length(answers)
        pairs = list(zip(answers, questions))
        kinds = {pair: degenerate_kind(pair[0], pair[1], self.patterns, median, self.long_ratio)
                 for pair in dict.fromkeys(pairs)}
        return list(map(kinds.__getitem__, pairs))

    def describe(self) -> dict[str, object]:
        return {"patterns": self.patterns.source, "long_answer_ratio": self.long_ratio, "kinds": list(KINDS)}


def make_gate(extra_patterns: Path | None = None, long_ratio: float = DEFAULT_LONG_RATIO,
              languages: Sequence[str] | None = None) -> ReferenceGate:
    """The gate for a run: bundled patterns (+ ``extra_patterns``), ratio checked."""
    return ReferenceGate(load_patterns(extra_patterns, languages), check_long_ratio(long_ratio))


def count_kinds(kinds: Iterable[str | None]) -> dict[str, int]:
    """``{kind: count}`` for every kind (zeros included) plus ``total`` degenerate and ``answers`` checked."""
    kinds = list(kinds)
    counts = Counter(k for k in kinds if k is not None)
    return {**{kind: counts.get(kind, 0) for kind in KINDS}, "total": sum(counts.values()), "answers": len(kinds)}
