"""The architecture, read from the source: imports run one way, floor by floor, with no cycles.

Floors, bottom up (README, "Architecture"): the runner and the indexer; the rungs and what they
share; the policy (one climb, many climbs, reports, the suite); the optimization loop; the command
line and the MCP server. A module may import its own floor or a lower one, never a higher one, and
nothing outside the runner reaches past its door into the evaluation's internals.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("runner", "indexer", "diagnoser")
FOLDERS = (*PACKAGES, "kernels", "kb")  # installed as ladder.runner, ..., ladder.kb

# Module-name prefixes by floor; the longest matching prefix decides.
FLOORS: dict[str, int] = {
    "runner": 0, "indexer": 0,
    "diagnoser.subject": 1, "diagnoser.evidence": 1, "diagnoser.agreement": 1, "diagnoser.rungs": 1,
    "diagnoser.triage": 1, "diagnoser.profile": 1, "diagnoser.ir": 1, "diagnoser.compiler": 1,
    "diagnoser.gap": 2, "diagnoser.ladder": 2, "diagnoser.batch": 2, "diagnoser.report": 2,
    "diagnoser.suite": 2,
    "diagnoser.optimize": 3,
    "diagnoser.cli": 4, "diagnoser.mcp": 4, "diagnoser.__main__": 4, "diagnoser": 4,
}
FLOOR_NAMES = {0: "runner/indexer", 1: "rungs", 2: "policy", 3: "loop", 4: "command line"}
# The runner's evaluation internals: only runner.bench (the door) and the runner itself use them.
RUNNER_INTERNALS = ("runner.worker", "runner.isolation", "runner.evaluate", "runner.evaluation", "runner.case",
                    "runner.timing", "runner.guards", "runner.contestant", "runner.contestants", "runner.sentinel",
                    "runner.channel", "runner.exchange", "runner.sandbox")
MAX_MODULE_LINES = 600


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in the file, lazy imports included).

    ``from package import submodule`` is an edge to the submodule; an import of a package the
    module itself lives in (its own namespace) is not an edge, nor is one made only for type
    checkers (under ``if TYPE_CHECKING:``).
    """
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node in _runtime_nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [_unprefixed(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = _unprefixed(node.module or "")
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    module = ".".join(base + ([module] if module else []))
                submodules = [_joined(module, alias.name) for alias in node.names if _joined(module, alias.name) in known]
                targets = submodules if len(submodules) == len(node.names) else [module, *submodules]
            else:
                continue
            for target in targets:
                resolved = _resolve(target, known)
                if resolved and resolved != name and not name.startswith(resolved + "."):
                    graph[name].add(resolved)
    return graph


def _unprefixed(name: str) -> str:
    """A module's name inside the project: `ladder.runner.bench` is the folder module `runner.bench`."""
    return "" if name == "ladder" else name.removeprefix("ladder.")


def _joined(module: str, name: str) -> str:
    return f"{module}.{name}" if module else name


def _runtime_nodes(tree: ast.AST):
    """Every node except those under ``if TYPE_CHECKING:``."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                pending.extend(child.orelse)
            else:
                pending.append(child)


def floor_of(module: str) -> int:
    prefix = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len)
    return FLOORS[prefix]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for neighbour in graph.get(node, ()):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {t for targets in graph.values() for t in targets}):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_import_graph_has_no_cycle(graph):
    assert cycles(graph) == []


def test_no_module_imports_a_floor_above_its_own(graph):
    upward = sorted(f"{module} ({FLOOR_NAMES[floor_of(module)]}) imports {target} ({FLOOR_NAMES[floor_of(target)]})"
                    for module, targets in graph.items() for target in targets
                    if floor_of(target) > floor_of(module))
    assert upward == []


def test_only_the_runner_reaches_its_evaluation_internals(graph):
    reaching = sorted(f"{module} imports {target}" for module, targets in graph.items() if not module.startswith("runner")
                      for target in targets if target.startswith(RUNNER_INTERNALS))
    assert reaching == []


def test_nothing_in_diagnoser_but_the_command_line_imports_the_optimization_loop(graph):
    importers = sorted(module for module, targets in graph.items()
                       if any(t.startswith("diagnoser.optimize") for t in targets)
                       and not module.startswith("diagnoser.optimize") and floor_of(module) < 4)
    assert importers == []


def test_no_module_is_over_the_size_a_reader_takes_in_at_once():
    """A module past ~600 lines holds more than one job: split it along its own seams."""
    sizes = {module: len(path.read_text().splitlines()) for module, path in modules().items()}
    assert sorted(f"{module}: {lines} lines" for module, lines in sizes.items() if lines > MAX_MODULE_LINES) == []


def test_every_module_has_a_floor():
    assert all(floor_of(module) in FLOOR_NAMES for module in modules())


def test_every_import_of_the_project_goes_through_the_ladder_package():
    """Installed, the folders exist only as ladder.runner, ladder.diagnoser, ...; an import by the bare
    folder name works in a checkout alone (and would load a second copy of the module there)."""
    bare = []
    for path in sorted(ROOT.glob("[!.]*/**/*.py")):
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:  # fixtures of kernels that do not compile
            continue
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            bare += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in FOLDERS]
    assert bare == []


def test_the_checks_see_a_cycle_and_an_upward_import():
    fake = {"runner.a": {"diagnoser.ladder"}, "diagnoser.ladder": {"runner.a"}}
    assert cycles(fake) == [["diagnoser.ladder", "runner.a"]]
    assert floor_of("diagnoser.ladder") > floor_of("runner.a")
