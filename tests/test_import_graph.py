"""No import cycle in markdown_memory: the import graph of its modules, read from their syntax
trees, has no cycle.

An edge is any ``import`` / ``from ... import`` that can run: at module level or inside a
function. Importing ``a.b.c`` runs the packages ``a`` and ``a.b`` first, so it is an edge to
each of them too. Imports under ``if TYPE_CHECKING:`` never run (annotations only) and are not
edges. A cycle is printed as ``a -> b -> a`` with the line of each import.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

#: this repository's package source (not whichever copy is installed)
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "markdown_memory"

Graph = dict[str, dict[str, int]]  # module -> {imported module: line of the first such import}


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package at ``root`` (``pkg/__init__.py`` is ``pkg``)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` bodies."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(inner) for branch in node.body for inner in ast.walk(branch))
    return skip


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> list[str]:
    """The package's modules that import ``node`` of ``module`` runs (packages on the way included)."""
    if isinstance(node, ast.Import):
        wanted = [alias.name for alias in node.names]
    else:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level:
            base = base[: len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        wanted = [f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target for alias in node.names]
    found = []
    for name in wanted:
        parts = name.split(".")
        found += [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in known]
    return found


@functools.lru_cache(maxsize=4)
def _parsed(root: Path) -> dict[str, tuple[Path, ast.AST, set[int]]]:
    """Each module of the package at ``root``: (file, syntax tree, ids of its ``TYPE_CHECKING``
    nodes), parsed once per test run for the tests that read the same package."""
    out = {}
    for module, path in module_names(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        out[module] = (path, tree, _type_checking_only(tree))
    return out


def import_graph(root: Path, *, annotations: bool = False) -> Graph:
    """The import graph of the package at ``root`` (see module docstring); self-edges left out.
    ``annotations``: imports under ``if TYPE_CHECKING:`` are edges too."""
    parsed = _parsed(root)
    known = {module: path for module, (path, _tree, _skip) in parsed.items()}
    graph: Graph = {}
    for module, (path, tree, checking) in parsed.items():
        skip = set() if annotations else checking
        edges: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                for target in _targets(module, path.name == "__init__.py", node, known):
                    if target != module and not module.startswith(target + "."):
                        edges[target] = min(edges.get(target, node.lineno), node.lineno)
        graph[module] = edges
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) per strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (no recursion limit)
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(_one_cycle(graph, set(component)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _one_cycle(graph: Graph, component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node]):
            if child == start:
                return paths[node] + [start]
            if child in component and child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    raise AssertionError("a strongly connected component always holds a cycle")


def describe(graph: Graph, cycle: list[str]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_no_import_cycle_in_the_package():
    graph = import_graph(PACKAGE)
    assert len(graph) > 50  # the walk found the package
    found = [describe(graph, c) for c in cycles(graph)]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_messages_imports_nothing_above_it():
    """``messages`` words facts that callers hand it: it reads only the low modules."""
    graph = import_graph(PACKAGE)
    allowed = {"markdown_memory.config", "markdown_memory.models", "markdown_memory.reader", "markdown_memory.text"}
    reached, todo = set(), ["markdown_memory.messages"]
    while todo:
        for target in graph[todo.pop()]:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    # messages is a package split by audience: its modules together import only the low ones
    own = [m for m in graph if m == "markdown_memory.messages" or m.startswith("markdown_memory.messages.")]
    direct = {t for m in own for t in graph[m] if t not in own and not t.startswith("markdown_memory.models.")}
    assert direct <= allowed, sorted(direct - allowed)
    assert not any(m.startswith(("markdown_memory.files", "markdown_memory.store", "markdown_memory.search",
                                 "markdown_memory.index", "markdown_memory.engine")) for m in reached), sorted(reached)


#: the adapters: they plug into the service (their ops, ``cli/serve.py`` registers them), never
#: the other way round
ADAPTERS = ("markdown_memory.mcp", "markdown_memory.hook", "markdown_memory.cli", "markdown_memory.search_text",
            "markdown_memory.entry", "markdown_memory.__main__")


def _is_adapter(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in ADAPTERS)


def test_the_service_imports_no_adapter():
    """No module of ``service/`` imports an adapter, not even for an annotation, and nothing it
    imports when it runs does either."""
    typed = import_graph(PACKAGE, annotations=True)
    service = [m for m in typed if m.startswith("markdown_memory.service")]
    assert len(service) > 5
    direct = {f"{m} -> {t} (line {line})" for m in service for t, line in typed[m].items() if _is_adapter(t)}
    assert not direct, sorted(direct)
    graph = import_graph(PACKAGE)
    reached, todo = set(service), list(service)
    while todo:
        for target in graph[todo.pop()]:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    assert not {m for m in reached if _is_adapter(m)}, sorted(m for m in reached if _is_adapter(m))


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from .sub.high import g\n    return g\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/high.py": "from .. import low\n",
    })
    graph = import_graph(package)
    assert cycles(graph) == [["pkg.low", "pkg.sub.high", "pkg.low"]]
    assert describe(graph, cycles(graph)[0]) == "pkg.low (line 2) -> pkg.sub.high (line 1) -> pkg.low"


def test_type_checking_imports_and_acyclic_graphs_pass(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "pkg/b.py": "from . import a\nimport pkg.c\n",
        "pkg/c.py": "",
    })
    graph = import_graph(package)
    assert graph["pkg.a"] == {} and set(graph["pkg.b"]) == {"pkg.a", "pkg.c"}
    assert cycles(graph) == []


def test_importing_a_submodule_runs_its_package(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from .sub.leaf import x\n",
        "pkg/sub/__init__.py": "from ..low import y\n",
        "pkg/sub/leaf.py": "x = 1\n",
    })
    assert cycles(import_graph(package)) == [["pkg.low", "pkg.sub", "pkg.low"]]
