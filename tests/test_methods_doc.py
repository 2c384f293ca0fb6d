"""Citations of the methods point into docs/methods.md, at headings that exist.

Code, prompts, --help and the README cite ``docs/methods.md#<anchor>`` (GitHub's heading slugs);
the old ``METHODS.md §N`` of the project's private notes, which a user cannot open, is gone.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METHODS = ROOT / "docs" / "methods.md"
CITED_IN = ("ragdiag", "prompts", "tools", "benchmarks", "tests")
CITATION = re.compile(r"docs/methods\.md#([\w-]+)((?:\s+and\s+#[\w-]+)*)")


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors() -> set[str]:
    return {github_slug(line.lstrip("#")) for line in METHODS.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")}


def _sources() -> list[Path]:
    files = [ROOT / "README.md"]
    for folder in CITED_IN:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".toml", ".md") and p.is_file()]
    return files


def test_every_cited_anchor_is_a_heading_of_docs_methods():
    anchors, cited = _anchors(), {}
    for path in _sources():
        for match in CITATION.finditer(path.read_text(encoding="utf-8")):
            for anchor in [match.group(1), *re.findall(r"#([\w-]+)", match.group(2))]:
                cited.setdefault(anchor, path.relative_to(ROOT))
    assert {"2-per-sample-measures", "8-graded-utility-metrics", "10-answer-sweep"} <= set(cited)
    missing = {anchor: str(where) for anchor, where in cited.items() if anchor not in anchors}
    assert missing == {}


def test_no_citation_of_the_private_methods_notes_is_left():
    pattern = re.compile(r"METHODS(\.md| §)")
    left = [str(p.relative_to(ROOT)) for p in _sources() if p != Path(__file__) and pattern.search(p.read_text(encoding="utf-8"))]
    assert left == []


def test_paper_numbers_are_mapped_to_full_citations_once():
    text = METHODS.read_text(encoding="utf-8")
    for number, arxiv in (("paper 000", "arXiv:2507.00379"), ("paper 003", "arXiv:2512.20854")):
        row = next(line for line in text.splitlines() if line.startswith(f"| {number} |"))
        assert arxiv in row
    assert "| paper 001 | Etienne Dallaire." in text and "| note 002 |" in text
