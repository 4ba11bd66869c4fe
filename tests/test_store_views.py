"""The store's narrow views (``store/views.py``): ``Store`` implements each, and the consumers
that are not annotated with theirs yet (``search/``) call nothing outside it, so a consumer's
dependency on the database is the short list its view names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from markdown_memory.store import Store
from markdown_memory.store.views import IndexWrites, LinkWrites, SearchReads

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "markdown_memory"
VIEWS = (SearchReads, IndexWrites, LinkWrites)


def members(view: type) -> set[str]:
    """The attribute and method names a view declares."""
    names = set(getattr(view, "__annotations__", {}))
    names.update(n for n in vars(view) if not n.startswith("_"))
    return names


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_the_store_implements_every_view(view: type, tmp_path: Path) -> None:
    store = Store(tmp_path / "index.db")
    try:
        missing = {name for name in members(view) if not hasattr(store, name)}
        assert not missing, f"Store lacks {sorted(missing)} of {view.__name__}"
    finally:
        store.close()


def store_calls(folder: Path) -> dict[str, set[str]]:
    """``{member: {file:line, ...}}`` of every ``store.X`` / ``self.store.X`` / ``self._store.X``
    in the modules of ``folder``."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            named = isinstance(owner, ast.Name) and owner.id == "store"
            held = (isinstance(owner, ast.Attribute) and owner.attr in ("store", "_store")
                    and isinstance(owner.value, ast.Name) and owner.value.id == "self")
            if named or held:
                found.setdefault(node.attr, set()).add(f"{path.name}:{node.lineno}")
    return found


def test_search_reads_only_its_view() -> None:
    calls = store_calls(PACKAGE / "search")
    assert len(calls) >= 10  # the scan sees search's reads
    outside = {name: sorted(where) for name, where in calls.items() if name not in members(SearchReads)}
    assert not outside, f"search/ uses store members SearchReads does not name: {outside}"
