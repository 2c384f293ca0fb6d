"""The command layer sits between the command line and the library (issue 17: one home per command).

``cli/`` builds a request from options and renders a result; ``commands/`` checks inputs, computes
through the library, writes through the one writer and stamps the run record; the library never
reaches back up. Read from the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast

from tests.architecture.import_graph import PACKAGE_DIR, folder_graph, module_graph
from tests.architecture.source_trees import nodes

# what a cli module may import besides other cli modules: the commands, the renderers, and the
# small declarations options are built from (errors, option parsers, registries, extras hints)
CLI_MAY_IMPORT = (
    "ragdiag.cli",
    "ragdiag.commands",
    "ragdiag.report",
    "ragdiag.errors",
    "ragdiag.extras",
    "ragdiag.config",
    "ragdiag.engine.settings",  # the --engine options' settings type (checks only; imports errors alone)
    "ragdiag.io.fields",  # --fields and the --…-format options' parsers and the Reading they build
    "ragdiag.io.lists",
    "ragdiag.io.out_format",
    "ragdiag.io.quiet_pipe",  # the entry point's stdout guard: a broken pipe is silence, the exit code the command's
    "ragdiag.io.settings",  # the settings file and RAGDIAG_* fill option values before a command parses them
    "ragdiag.measures",  # the one measure registry: option choices, help, legends (import-light, no numpy)
)
LIBRARY = ("bench", "data", "evaluate", "llm", "measures", "metrics", "pipeline", "probes", "remote", "retrieval", "sweep")
WRITING_CALLS = {"write_text", "write_bytes", "write_json", "write_jsonl", "atomic_path", "savefig", "save", "mkdir",
                 "unlink", "rename", "touch"}
COMPUTING_MODULES = {"numpy", "scipy", "faiss", "torch", "pandas", "pyarrow", "matplotlib"}


def _allowed(target: str) -> bool:
    return any(target == prefix or target.startswith(prefix + ".") for prefix in CLI_MAY_IMPORT)


def test_cli_imports_only_commands_renderers_and_declarations():
    graph = module_graph()
    wrong = sorted(f"{source} → {target}" for source, targets in graph.items() if source.startswith("ragdiag.cli")
                   for target in targets if not _allowed(target))
    assert wrong == [], "cli/ must reach the library through commands/:\n" + "\n".join(wrong)


def test_cli_writes_no_file_and_computes_nothing():
    found = []
    for path in sorted((PACKAGE_DIR / "cli").glob("*.py")):
        for node in nodes(path):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in WRITING_CALLS or name == "open":
                    found.append(f"{path.name}:{node.lineno}: calls {name}()")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found += [f"{path.name}:{node.lineno}: imports {n}" for n in names if n.split(".")[0] in COMPUTING_MODULES]
    assert found == [], "cli/ only builds requests and renders results:\n" + "\n".join(found)


def test_the_commands_layer_sits_between_cli_and_the_library():
    folders = folder_graph()
    assert "commands" in folders["cli"]
    direct = sorted(target for source, targets in module_graph().items() if source.startswith("ragdiag.cli")
                    for target in targets if target.split(".")[1] in LIBRARY and not target.endswith(".registry"))
    assert direct == [], f"cli/ imports the library directly (registries aside): {direct}"
    assert "cli" not in folders["commands"], "commands/ must not import cli/"
    for folder in (*LIBRARY, "report", "io", "errors"):
        assert "commands" not in folders.get(folder, set()), f"{folder}/ imports commands/: the library must not reach up"


def test_one_module_per_command():
    """Every command on the app is a cli function whose module runs a module of ``ragdiag/commands``."""
    import typer.main

    from ragdiag.cli import app

    graph = module_graph()
    homeless = []

    def visit(command, path: str) -> None:
        for name, sub in (getattr(command, "commands", None) or {}).items():
            visit(sub, f"{path} {name}")
        if getattr(command, "commands", None) is None and command.callback is not None:
            module = command.callback.__module__
            if not any(t.startswith("ragdiag.commands.") for t in graph.get(module, ())):
                homeless.append(f"{path} ({module})")

    visit(typer.main.get_command(app), "ragdiag")
    assert homeless == [], f"commands that run no module of ragdiag/commands/: {homeless}"
