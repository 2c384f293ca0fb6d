"""HTML building blocks of the report: escaping, sortable tables, labels, images, the page shell.

Everything from an input file passes through :func:`esc` (``html.escape`` with quotes), so a
passage or an answer holding ``<script>`` is shown as text. Styles and the ~20-line table sorter
are inline; images are ``data:image/png;base64`` URIs. The page makes no network request.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2430;background:#fff}
header{background:#1d2430;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c9d1dc}
main{padding:8px 28px 40px;max-width:1280px}
nav{background:#f4f6f9;border:1px solid #dfe4ea;border-radius:6px;padding:10px 18px;margin:16px 0}
nav ol{margin:4px 0;padding-left:22px}
section{border-top:1px solid #dfe4ea;margin-top:26px;padding-top:6px}
h2{font-size:19px;margin:14px 0 6px}h3{font-size:15px;margin:16px 0 6px}
.src{color:#5b6777;font-size:12px;word-break:break-all}
.label{display:inline-block;font-weight:700;font-size:12px;padding:2px 8px;border-radius:4px;margin:2px 6px 2px 0}
.label.sim{background:#fde2e1;color:#9b1c1c;border:1px solid #f5a3a0}
.label.test{background:#fff1c2;color:#7a5300;border:1px solid #f0cf6b}
.verdict{background:#eef7ee;border-left:4px solid #3a8a3a;padding:8px 12px;margin:8px 0}
.verdict.failing{background:#fbeeee;border-left-color:#b03030}
.verdict li{margin:2px 0}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}
th,td{border:1px solid #d5dbe3;padding:4px 8px;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
th{background:#eef1f5;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
td.txt{text-align:left;max-width:520px}
img{max-width:100%;border:1px solid #dfe4ea;margin:6px 0}
details{margin:8px 0}summary{cursor:pointer;color:#34506f}
pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px;max-height:420px}
.note{color:#5b6777}
.warning{color:#8a4b00;font-weight:600}
"""

SORT_JS = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      function key(row) {
        var cell = row.cells[col], text = cell ? (cell.getAttribute("data-v") || cell.textContent).trim() : "";
        var num = parseFloat(text.replace(/[%,]/g, ""));
        return isNaN(num) || !/^[-+]?[0-9.]/.test(text) ? [1, text.toLowerCase()] : [0, num];
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x[0] !== y[0]) return x[0] - y[0];
        return (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) * dir;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def esc(value: Any) -> str:
    """HTML-escaped text of any value (quotes too: safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def num(value: Any, digits: int = 3, signed: bool = False) -> str:
    """A number for a table cell: '–' for None/NaN, integers as is, floats to ``digits``."""
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return esc(value)


def interval(ci: Any, digits: int = 3) -> str:
    if not ci or len(ci) != 2 or ci[0] is None:
        return ""
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]], caption: str | None = None) -> str:
    """A sortable table; cells are escaped unless given as :class:`Raw`; numbers formatted by :func:`num`."""
    out = ['<table class="sortable">']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, Raw):
                cells.append(f"<td>{cell.html}</td>")
            elif isinstance(cell, (int, float)) or cell is None:
                cells.append(f'<td data-v="{esc("" if cell is None else cell)}">{num(cell)}</td>')
            else:
                cells.append(f'<td class="txt">{esc(cell)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


@dataclass
class Raw:
    """Already-safe HTML for a table cell (built from escaped parts)."""

    html: str


def image(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def labels(simulated: bool = False, test_server: bool = False) -> str:
    parts = []
    if simulated:
        parts.append('<span class="label sim">SIMULATED GRADES — the numbers say nothing about real LLMs</span>')
    if test_server:
        parts.append('<span class="label test">TEST SERVER — replies are a test server\'s output, not an LLM\'s</span>')
    return "".join(parts)


def record_block(doc: Any) -> str:
    """The run record (``run_record``; older files: ``meta``) as a collapsible JSON block."""
    if not isinstance(doc, dict):
        return ""
    blocks = []
    for key in ("run_record", "meta"):
        if isinstance(doc.get(key), dict):
            text = json.dumps(doc[key], indent=1, ensure_ascii=False, default=str)
            blocks.append(f"<details><summary>{esc(key)}</summary><pre>{esc(text)}</pre></details>")
    return "".join(blocks)


@dataclass
class Section:
    """One section of the page: its kind (e.g. ``correlate``), title, source file and body HTML."""

    kind: str
    title: str
    source: str
    body: str
    anchor: str = ""
    notes: list[str] = field(default_factory=list)


def slug(text: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    name, i = base, 2
    while name in used:
        name, i = f"{base}-{i}", i + 1
    used.add(name)
    return name


def page(title: str, subtitle: str, sections: list[Section]) -> str:
    """The whole document: header, contents list, sections, the inline sorter."""
    used: set[str] = set()
    for s in sections:
        s.anchor = slug(f"{s.kind}-{s.title}", used)
    toc = "".join(f'<li><a href="#{s.anchor}">{esc(s.title)}</a> <span class="src">{esc(s.source)}</span></li>'
                  for s in sections)
    body = "".join(
        f'<section id="{s.anchor}" data-kind="{esc(s.kind)}"><h2>{esc(s.title)}</h2>'
        f'<div class="src">{esc(s.source)}</div>{s.body}</section>' for s in sections)
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
        f"<style>{CSS}</style></head><body><header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header><main>"
        f"<nav><strong>Contents</strong><ol>{toc}</ol></nav>{body}</main><script>{SORT_JS}</script></body></html>\n"
    )
