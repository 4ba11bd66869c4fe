"""The package's public surface: what ``import markdown_memory`` promises, and the layering
rules that keep the core changeable (SQL only in store/, no private names across packages)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import markdown_memory

SRC = Path(markdown_memory.__file__).parent

PUBLIC = {
    "__version__", "Engine", "Settings", "Freshness", "SearchAnswer", "Hit", "Outline", "OutlineHeading",
    "SectionText", "DocumentList", "DocumentEntry", "IndexStatus", "IndexReport", "MarkdownMemoryError",
    "ConfigError", "DocumentNotFoundError", "SectionNotFoundError", "PathOutsideRootError", "QueryError",
    "IndexBusyError", "EmbedderUnavailableError", "RootMismatchError", "DocsRootMissingError",
    "DatabaseReadOnlyError", "SearchRequest", "InvalidRequestError",
}


def test_all_is_the_documented_public_api_and_every_name_resolves() -> None:
    assert set(markdown_memory.__all__) == PUBLIC
    for name in markdown_memory.__all__:
        assert getattr(markdown_memory, name) is not None, name
    from markdown_memory.engine import Engine
    from markdown_memory.models import SearchAnswer

    assert markdown_memory.Engine is Engine and markdown_memory.SearchAnswer is SearchAnswer


def test_importing_the_package_loads_no_engine_numpy_or_database() -> None:
    # the MCP handshake imports the package: it must stay cheap
    code = ("import sys, markdown_memory, markdown_memory.mcp, markdown_memory.mcp.runtime, markdown_memory.cli; "
            "print(sorted(m for m in ('numpy', 'sqlite3', 'markdown_memory.engine', 'onnxruntime', 'markdown_memory.embed.base') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else ""


def _absolute(path: Path, node: ast.ImportFrom) -> list[str]:
    """The absolute module path (parts after ``markdown_memory``) a relative import names."""
    here = list(path.relative_to(SRC).with_suffix("").parts)
    base = here[: len(here) - node.level]
    return base + (node.module.split(".") if node.module else [])


def test_no_module_imports_a_private_name_from_another_package() -> None:
    offences = []
    for path, tree in _modules():
        mine = _package_of(path)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            target = _absolute(path, node)
            theirs = target[0] if target and (SRC / target[0]).is_dir() else ""
            if theirs == mine:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__version__":
                    offences.append(f"{path.relative_to(SRC)}:{node.lineno} imports {'.'.join(target)}.{alias.name}")
    assert offences == []


def test_no_module_is_over_600_lines_and_the_engine_stays_a_facade() -> None:
    sizes = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p, _ in _modules()}
    assert {k: v for k, v in sizes.items() if v > 600} == {}
    # the façade grows by thin methods only; logic lives in the packages below it
    assert sizes["engine.py"] < 530
