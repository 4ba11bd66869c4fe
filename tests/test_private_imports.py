"""Libraries as published: no module imports a private name (``_x``) of another package, of a
third-party library (``watchfiles._rust_notify``) or of another subpackage of this one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "markdown_memory"


def _private(parts: list[str]) -> bool:
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts)


def private_imports(root: Path) -> list[str]:
    """``file:line name`` of each import of another package's private name below ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("").parts
        package = list(rel[:-1])  # the importing module's package
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _private(alias.name.split(".")):
                        found.append(f"{path.name}:{node.lineno} {alias.name}")
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = base + (node.module.split(".") if node.module else [])
                else:
                    target = (node.module or "").split(".")
                own = target[: len(package)] == package and node.level <= 1  # this module's own package
                names = [] if own else [a.name for a in node.names]
                if _private(target) or _private(names):
                    found.append(f"{path.name}:{node.lineno} {'.'.join(target)}: {', '.join(names)}")
    return found


def test_no_private_name_of_another_package_is_imported():
    assert private_imports(PACKAGE) == []


def test_the_check_sees_a_private_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "a" / "x.py").write_text("from ..b.y import _hidden\nfrom .z import _ok\nimport lib._core\n")
    assert private_imports(pkg) == ["x.py:1 pkg.b.y: _hidden", "x.py:3 lib._core"]
