"""The package has no import cycles and keeps its layers (issue 8: one shape)."""

from __future__ import annotations

from tests.architecture.import_graph import cycles, folder_graph, module_graph


def test_the_graph_sees_known_edges():
    graph = module_graph()
    assert "ragdiag.errors" in graph["ragdiag.cli"]
    assert graph["ragdiag.io.writer"] == {"ragdiag.errors", "ragdiag.io.figures"}  # write_figure: the PNG encoder
    assert "ragdiag.errors" in graph["ragdiag.extras"]


def test_no_import_cycle_between_modules():
    assert cycles(module_graph()) == []


def test_no_import_cycle_between_folders():
    assert cycles(folder_graph()) == []


def test_layers():
    folders = folder_graph()
    assert "report" not in folders.get("metrics", set()), "metrics/ must not import report/"
    assert "retrieval" not in folders.get("data", set()), "data/ must not import retrieval/"
    for folder, targets in folders.items():
        if folder != "cli":
            assert "cli" not in targets, f"{folder}/ imports cli/: the library must not depend on the command line"
    for base in ("errors", "io", "extras", "config", "resources"):
        assert folders.get(base, set()) <= {"errors", "ragdiag", "io"}, f"{base} must stay a base layer"


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
