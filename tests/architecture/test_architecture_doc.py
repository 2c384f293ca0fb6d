"""docs/architecture.md names modules, folders and tests; every one of them exists (issue 30: the page is true)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TOP = ("tests", "answers", "bench", "cli", "commands", "compare", "data", "engine", "evaluate", "io", "llm",
       "measures", "metrics", "pipeline", "probes", "remote", "report", "results", "retrieval", "sweep", "testset", "triage")
FOLDERS = "|".join(TOP)
PATH = re.compile(rf"(?<![\w/])((?:{FOLDERS})/[\w/]*\w(?:\.py)?)")


def named_paths(text: str) -> set[str]:
    """Every ``folder/…`` path in the text (``io/paths.check_paths`` names ``io/paths``)."""
    return set(PATH.findall(text))


def _exists(name: str) -> bool:
    base = ROOT if name.startswith("tests/") else ROOT / "ragdiag"
    path = base / name
    return path.exists() or path.with_suffix(".py").exists()


def test_every_path_the_page_names_exists():
    names = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(names) > 40, "the page names the modules and tests it describes"
    missing = sorted(n for n in names if not _exists(n))
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_tests_the_page_cites_are_in_the_suite():
    cited = {n for n in named_paths(DOC.read_text(encoding="utf-8")) if n.startswith("tests/") and n.endswith(".py")}
    assert {"tests/architecture/test_writers.py", "tests/architecture/test_renderers.py",
            "tests/architecture/test_types.py", "tests/answers/test_stages_in_memory.py"} <= cited
    assert all((ROOT / n).read_text(encoding="utf-8").count("def test_") >= 1 for n in cited)


def test_the_path_reader_sees_module_paths_and_stops_at_attributes():
    assert named_paths("`io/paths.check_paths` and `tests/x/test_y.py`, `bench/`") == {
        "io/paths", "tests/x/test_y.py"}
