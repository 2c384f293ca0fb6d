"""The report in a real headless Chromium (Debian's package, driven by Playwright): loads with no
console error and no network request, every section is present, tables sort on click, and the
top of the page renders as non-blank content. Without Chromium or Playwright it skips in a clone
and fails in CI (:mod:`tests.ci_strict`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragdiag.commands.report import build_report
from tests.ci_strict import import_or_skip_or_fail, in_ci, skip_or_fail

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]

NO_CHROMIUM = "chromium is not installed (apt-get install -y chromium, or make browser)"
pytestmark = pytest.mark.skipif(CHROMIUM is None and not in_ci(), reason=NO_CHROMIUM)  # in CI: fails below


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the module (Playwright's sync API allows one session at a time)."""
    if CHROMIUM is None:
        skip_or_fail(NO_CHROMIUM)
    playwright_api = import_or_skip_or_fail("playwright.sync_api", "the playwright package is not installed")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _opened(browser, inputs: list[Path], folder: Path):
    """The report of ``inputs`` loaded in a new page: (page, sections, console errors, network
    requests, the HTML file)."""
    html, sections, _ = build_report(inputs)
    out = folder / "report.html"
    out.write_text(html)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("data:", "file:")) else None)
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    return page, sections, errors, requests, out


@pytest.fixture(scope="module")
def browser_page(chromium, results_dir, tmp_path_factory):
    return _opened(chromium, [results_dir], tmp_path_factory.mktemp("browser"))


def test_loads_without_errors_or_network(browser_page):
    _page, _sections, errors, requests, _out = browser_page
    assert errors == [] and requests == []


def test_every_section_is_present(browser_page):
    page, sections, *_ = browser_page
    shown = page.eval_on_selector_all("section", "els => els.map(e => e.dataset.kind)")
    assert shown == [s.kind for s in sections]
    assert set(shown) >= {"correlate", "robustness", "probe-names", "llm-run", "graded"}
    assert page.locator("nav li").count() == len(sections)
    assert page.eval_on_selector_all("img", "els => els.every(e => e.complete && e.naturalWidth > 100)")


def test_tables_sort_on_click(browser_page):
    page, *_ = browser_page
    table = page.locator("section[data-kind=robustness] table").first
    column = "el => Array.from(el.tBodies[0].rows).map(r => parseFloat(r.cells[2].textContent))"
    header = table.locator("th").nth(2)  # recall@10
    header.click()
    ascending = table.evaluate(column)
    assert ascending == sorted(ascending) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    descending = table.evaluate(column)
    assert descending == sorted(ascending, reverse=True) and header.get_attribute("aria-sort") == "descending"


def test_top_of_page_screenshot_is_not_blank(browser_page):
    page, *_, out = browser_page
    Image = import_or_skip_or_fail("PIL.Image", "Pillow is not installed (pip install pillow)")

    shot = out.with_suffix(".png")
    page.evaluate("window.scrollTo(0, 0)")  # clicking a header scrolled the page
    page.screenshot(path=str(shot))
    image = Image.open(shot).convert("L")
    assert image.size == (1280, 900)
    band = image.crop((0, 0, 1280, 10)).histogram()  # the dark header band above the title
    assert sum(band[:80]) / sum(band) > 0.95
    body = list(image.crop((0, 100, 1280, 900)).get_flattened_data())
    inked = sum(1 for v in body if v < 200) / len(body)
    assert inked > 0.02  # text, tables and labels, not a blank page
    assert len(set(body)) > 20


def test_clq_and_dynamic_k_sections_load_with_their_plots_and_sort(chromium, decision_dir, tmp_path):
    """The page of ``clq --out`` and ``dynamic-k --out`` (conftest ``decision_dir``): no error, both
    plots decoded, the configurations sort by cost on a click."""
    page, sections, errors, requests, _ = _opened(chromium, [decision_dir / "clq.json", decision_dir / "dynamic_k.json"],
                                                  tmp_path)
    assert errors == [] and requests == []
    shown = page.eval_on_selector_all("section", "els => els.map(e => e.dataset.kind)")
    assert shown == [s.kind for s in sections] == ["dynamic-k", "clq"]
    sizes = page.eval_on_selector_all("section img", "els => els.map(e => e.complete ? e.naturalWidth : 0)")
    assert len(sizes) == 2 and min(sizes) > 500
    table = page.locator("section[data-kind=clq] table").first
    cost = "el => Array.from(el.tBodies[0].rows).map(r => parseFloat(r.cells[2].textContent))"
    table.locator("th").nth(2).click()
    ascending = table.evaluate(cost)
    assert ascending == sorted(ascending) and len(ascending) == 5
