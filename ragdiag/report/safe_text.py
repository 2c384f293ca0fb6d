"""Data shown as text, never as markup (issue 44): query ids, column names and file names reach the
terminal with their control characters written as escapes, and Markdown (``--summary-md``,
``$GITHUB_STEP_SUMMARY``) escaped for Markdown and HTML on one line.

A name holding ``\\n**GATE PASS**`` would otherwise start a line of its own in a failing gate's
summary; a backtick would close a code span and leave raw HTML; ``\\x1b[…`` would restyle the
terminal; ``[/x]`` would be read as rich markup.
"""

from __future__ import annotations

import html
import re
import unicodedata

# Bidirectional overrides and isolates reorder the text around them (CVE-2021-42574, "Trojan Source").
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Inline Markdown: code spans, emphasis, links and images, tables, strikethrough, the escape itself.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")


def visible(text: str) -> str:
    """``text`` on one line: every control character (Unicode category Cc: C0, DEL, C1), line and
    paragraph separator and bidi override written as its Python escape (``\\n``, ``\\x1b``, ``\\u202e``)."""
    if text.isprintable():
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI else ch for ch in text)


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown inline text on one line (GitHub Flavored Markdown): :func:`visible`,
    then ``&``, ``<`` and ``>`` as HTML entities and the inline Markdown characters backslash-escaped."""
    return _MARKDOWN.sub(r"\\\1", html.escape(visible(text), quote=False))
