"""SQL lives in one package: no module of markdown_memory outside ``store/`` runs a statement.

A call of ``.execute(``, ``.executemany(`` or ``.executescript(`` on anything is a failure
(the names are found in the syntax tree, so comments and docstrings that mention them do not
count); the fix is a named, typed function of ``markdown_memory.store``.
"""

from __future__ import annotations

import ast
from pathlib import Path

#: this repository's package source (not whichever copy is installed)
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "markdown_memory"
STORE = PACKAGE / "store"
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})


def sql_calls(source: str, filename: str = "<source>") -> list[int]:
    """Line numbers of the ``x.execute(...)``-style calls in ``source``."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source, filename))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS
    )


def test_the_finder_sees_calls_and_ignores_comments_and_docstrings():
    source = '''"""Docs may say conn.execute("SELECT 1")."""
# store.conn.execute("SELECT 1")
x = store.conn.execute(
    "SELECT 1")
def f():
    """conn.executemany(...)"""
    return getattr(c, "execute")  # not a call of .execute
c.cursor().executescript("")
'''
    assert sql_calls(source) == [3, 8]


def test_no_sql_outside_the_store_package():
    assert STORE.is_dir(), STORE
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if STORE in path.parents:
            continue
        rel = path.relative_to(PACKAGE.parent)
        offenders += [f"{rel}:{line}" for line in sql_calls(path.read_text(encoding="utf-8"), str(path))]
    assert not offenders, ("SQL outside markdown_memory/store (move it into a store function): "
                           + ", ".join(offenders))
