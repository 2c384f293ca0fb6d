"""A command module does not call another command module (issue 38): ``commands/<command>.py`` reaches
the library and the shared helpers named here, never a sibling command. Read from the source: nothing
is imported."""

from __future__ import annotations

from tests.architecture.import_graph import module_graph

COMMANDS = "ragdiag.commands."
# the modules of commands/ that several commands share, each with what it holds
HELPERS = {
    "answer_files": "the answers and graded files generate, grade and pipeline write, ranking with an embedder",
    "llm_files": "how the LLM commands write their files: held bytes, run records, manifests, output guards",
    "provenance": "the manifest beside a graded file, simulated rows (correlate, report)",
    "names_real": "probe names --queries: the name probe on a user's own queries (probe's second half)",
    "calibrate_plan": "calibrate --plan: the budget plan over questions, judge repeats and human labels",
    "calibrate_design": "calibrate --suggest --strategy: the labelling draw and the estimate its sheet supports",
}


def _sideways() -> set[tuple[str, str]]:
    found = set()
    for source, targets in module_graph().items():
        if not source.startswith(COMMANDS):
            continue
        for target in targets:
            name = target.removeprefix(COMMANDS)
            if target.startswith(COMMANDS) and name not in HELPERS:
                found.add((source.removeprefix(COMMANDS), name))
    return found


def test_a_command_module_imports_no_other_command_module():
    found = _sideways()
    assert found == set(), f"a command calls another command sideways: {sorted(found)}"


def test_the_shared_helpers_call_no_command():
    helpers = {(source, target) for source, target in _sideways() if source in HELPERS}
    assert helpers == set()
    graph = module_graph()
    for helper in HELPERS:
        assert COMMANDS + helper in graph, f"{helper} is named a helper but does not exist"
