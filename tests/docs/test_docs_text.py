"""README.md and docs/: no page names a data folder a clone does not have, the README stays short
and starts with what ragdiag answers, and every local link of the README resolves."""

from __future__ import annotations

import re

import pytest

from tests.docs.examples import ROOT, pages

FORBIDDEN = ("../shared", "/work/shared", "shared/data")


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_mentions_the_development_data_folder(page):
    text = page.read_text(encoding="utf-8")
    found = [f"line {n}: {word}" for n, line in enumerate(text.split("\n"), 1) for word in FORBIDDEN if word in line]
    assert not found, f"{page.relative_to(ROOT)} names a folder beside the clone: {found}"


def test_readme_is_short_and_says_first_what_ragdiag_answers():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200)"
    first_sentence = next(line for line in lines[1:] if line.strip())
    assert "ragdiag answers" in first_sentence
    text = "\n".join(lines)
    assert "make run" in text and "make test" in text


def test_readme_local_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)]+)\)", text) if not t.startswith(("http", "#"))]
    assert targets, "README.md links to no page"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
