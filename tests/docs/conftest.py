"""The examples test's summary: blocks run, skipped (with their reasons) and passed, over the pages
that ran in this session (each page's test records its counts as a user property)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run = passed = pages = 0
    skipped: list[str] = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call":
                continue
            counts = dict(getattr(report, "user_properties", [])).get("examples")
            if counts is None:
                continue
            pages += 1
            run += counts["run"]
            passed += counts["passed"]
            skipped += counts["skipped"]
    if not pages:
        return
    terminalreporter.write_sep("-", f"documentation examples: {pages} pages, {run} blocks run, "
                                    f"{passed} passed, {len(skipped)} skipped")
    for line in skipped:
        terminalreporter.write_line(f"skipped {line}")
