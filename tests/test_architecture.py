"""The package layers of docs/architecture.md, checked against every import in the code.

LAYERS is the layer order, bottom first: a package may import only packages on a lower line;
packages on the same line are peers and import neither each other nor anything above them.
The imports are read from the source (AST), lazy ones inside functions included, so a stage
that reaches up to call another is caught as surely as a module-level import.

Run as a script it prints the Mermaid picture of docs/architecture.md:

    python tests/test_architecture.py
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bottom first; each line: (packages, what they hold).
LAYERS: list[tuple[tuple[str, ...], str]] = [
    (("llm",), "LLM gateway: backends, scripted answers, transcripts, embeddings"),
    (("sandbox",), "confined execution of generated code"),
    (("domains",), "data contracts: spec, policy, DB layer, task model, tool schemas, the clock"),
    (("verification",), "procedural tests, verdicts, mutation gate, invariants, reward"),
    (("mcp_servers",), "runtime episodes, MCP server, HTTP app"),
    (("agents", "graph", "rollouts"), "stages: tool building, the tool graph; agents and episodes"),
    (("tasks",), "the task stage"),
    (("export", "trainers"), "trainer formats; trainer adapters (HTTP only)"),
    (("pipeline",), "the one orchestrator: python -m pipeline NAME"),
    (("bench", "domains/*"), "benchmarks; bundled domains' artifacts, tests and authoring scripts"),
]
# Packages that may import no project package at all: trainers talk to the core over HTTP.
ISOLATED = {"trainers"}
# Where the code is in the middle of a move: (importing file, imported module) -> why it is allowed.
# Each entry must still be in use, so that a finished move also removes its exception.
EXCEPTIONS: dict[tuple[str, str], str] = {}
# Product modules past this many lines usually hold two jobs (generated domain files aside).
MAX_LINES = 450
LONG_MODULES: dict[str, str] = {}

LAYER_OF = {package: n for n, (packages, _) in enumerate(LAYERS) for package in packages}


def unit_of(path: Path) -> str | None:
    """The layered unit a source file belongs to: its top-level package, or `domains/*` for a file
    inside a bundled domain's folder; None for tests and files outside any package."""
    parts = path.relative_to(ROOT).parts
    if len(parts) < 2 or not (ROOT / parts[0] / "__init__.py").is_file():
        return None
    if parts[0] == "domains" and len(parts) > 2:
        return "domains/*"
    return parts[0]


def package_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if (ROOT / top / "__init__.py").is_file() else None


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every absolute import, in functions too, and of import_module("...")."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) \
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module":
            found.append((node.lineno, node.args[0].value))
    return found


def source_files() -> list[Path]:
    return sorted(p for p in ROOT.glob("*/**/*.py") if unit_of(p) is not None)


def imports() -> list[tuple[str, str, str, str]]:
    """(importing unit, imported package, file, module) for every import of another project package."""
    edges = []
    for path in source_files():
        unit = unit_of(path)
        own = unit.split("/")[0]
        for line, module in imported_modules(ast.parse(path.read_text(), str(path))):
            target = package_of(module)
            if target is not None and target != own:
                edges.append((unit, target, f"{path.relative_to(ROOT)}:{line}", module))
    return edges


def package_graph() -> dict[str, set[str]]:
    """Package (or `domains/*`) -> the packages it imports, the EXCEPTIONS left out."""
    graph: dict[str, set[str]] = defaultdict(set)
    for unit, target, where, module in imports():
        if (where.rsplit(":", 1)[0], module) not in EXCEPTIONS:
            graph[unit].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {t for targets in graph.values() for t in targets}):
        if node not in index:
            visit(node)
    return found


def violations() -> tuple[list[str], set[tuple[str, str]]]:
    """Imports against the layer order, and the exceptions that were used."""
    problems, used = [], set()
    for unit, target, where, module in imports():
        file = where.rsplit(":", 1)[0]
        if unit in ISOLATED:
            why = f"{unit} imports no project package"
        elif LAYER_OF[target] < LAYER_OF[unit]:
            continue
        elif LAYER_OF[target] == LAYER_OF[unit]:
            why = f"{unit} and {target} are peers"
        else:
            why = f"{target} is above {unit}"
        if (file, module) in EXCEPTIONS:
            used.add((file, module))
            continue
        problems.append(f"{where}: imports {module} ({why})")
    return problems, used


def test_every_package_has_a_layer():
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()} - {"tests"}
    assert not packages - set(LAYER_OF), "add these packages to LAYERS (and docs/architecture.md)"


def test_the_package_import_graph_has_no_cycle():
    assert cycles(package_graph()) == []


def test_no_package_imports_a_peer_or_a_layer_above_it():
    problems, used = violations()
    assert problems == []
    assert set(EXCEPTIONS) <= used, f"no longer needed, remove from EXCEPTIONS: {sorted(set(EXCEPTIONS) - used)}"


def test_the_checks_catch_an_upward_import_and_a_cycle():
    tree = ast.parse("def late():\n    from graph.build import build_graph\n")
    assert imported_modules(tree) == [(2, "graph.build")]
    assert cycles({"agents": {"graph"}, "graph": {"llm", "agents"}, "llm": set()}) == [["agents", "graph"]]


def test_no_product_module_is_long():
    long = {}
    for path in source_files():
        if unit_of(path) == "domains/*":
            continue  # generated domain files (tools.py, db.py)
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert set(long) <= set(LONG_MODULES), {k: v for k, v in long.items() if k not in LONG_MODULES}
    stale = set(LONG_MODULES) - set(long)
    assert not stale, f"split or gone, remove from LONG_MODULES: {sorted(stale)}"


def mermaid() -> str:
    """The layers as a Mermaid flowchart, the bottom layer at the bottom; an arrow reads "may import"."""
    lines = ["flowchart BT"]
    for n, (packages, what) in enumerate(LAYERS):
        names = " · ".join("domains/NAME/" if p == "domains/*" else f"{p}/" for p in packages)
        lines.append(f'    L{n}["{n + 1}. {names}<br/><small>{what}</small>"]')
    for n in range(len(LAYERS) - 1):
        lines.append(f"    L{n + 1} --> L{n}")
    return "\n".join(lines) + "\n"


def test_the_picture_in_the_docs_is_the_layer_data():
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert f"```mermaid\n{mermaid()}```" in text, "regenerate it: python tests/test_architecture.py"


if __name__ == "__main__":
    sys.stdout.write(mermaid())
