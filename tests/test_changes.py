"""One scope classifier for the walk and the watcher (``files/changes.py``) and the engine's one
door for changes (``Engine.apply_changes``): an event becomes what an index run would make of
the path, and applying a change set leaves the index as a full run would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.files.changes import ADDED, DELETED, FULL, MODIFIED, PROBE, ChangeSet, ScopeClassifier
from markdown_memory.files.walk import walk_markdown
from markdown_memory.request import SearchRequest

TREE = ("a.md", "guides/b.md", "guides/c.draft.md", "node_modules/pkg/readme.md", ".hidden/z.md",
        "venv/lib/q.md", "vendor/gen.md", "notes.txt", "deep/er/d.md")


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for rel in TREE:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n\nThe {rel.replace('/', ' ')} text.\n", encoding="utf-8")
    (root / "venv/pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (root / "guides/.gitignore").write_text("*.draft.md\n", encoding="utf-8")
    return root


def test_events_are_judged_by_the_walks_rules(root: Path) -> None:
    classifier = ScopeClassifier(root, ["vendor/"], skip=[str(root / "index.db")])
    (root / "new").mkdir()
    (root / "new/e.md").write_text("# E\n", encoding="utf-8")
    events = [(MODIFIED, str(root / rel)) for rel in TREE]
    events += [(ADDED, str(root / "new")), (DELETED, str(root / "gone.md")), (DELETED, str(root / "old")),
               (MODIFIED, str(root / "index.db-wal")), (MODIFIED, str(root.parent / "elsewhere.md")),
               (MODIFIED, str(root / "deep"))]  # a folder's mtime: no news
    changes = classifier.classify(events)
    walked = {e.rel for e in walk_markdown(root, ["vendor/"]).files}
    assert changes.files == {rel for rel in TREE if rel in walked} == {"a.md", "guides/b.md", "deep/er/d.md"}
    assert changes.folders == {"new"} and changes.gone == {"gone.md", "old"} and not changes.full


def test_an_ignore_file_changes_the_whole_scope(root: Path) -> None:
    classifier = ScopeClassifier(root)
    assert classifier.classify([(MODIFIED, str(root / "guides/.gitignore"))]) == FULL
    assert classifier.classify([(MODIFIED, str(root / "node_modules/.gitignore"))]) == ChangeSet()  # never walked
    (root / "guides/.gitignore").write_text("", encoding="utf-8")  # the rules are read again after it
    assert classifier.classify([(MODIFIED, str(root / "guides/c.draft.md"))]).files == {"guides/c.draft.md"}


def test_change_sets_fold_and_a_full_run_covers_them() -> None:
    one, two = ChangeSet(files=frozenset({"a.md"})), ChangeSet(gone=frozenset({"b.md"}))
    assert (one | two).size == 2 and (one | FULL) == FULL and (FULL | two) == FULL
    assert (one | two).limited(1) == FULL and (one | two).limited(2) == one | two
    assert not ChangeSet() and PROBE and (PROBE | one).probe


@pytest.fixture()
def engine(root: Path, tmp_path: Path):
    engine = Engine(Settings.load(root, tmp_path / "index.db", "none"))
    engine.index()
    yield engine
    engine.close()


def indexed(engine: Engine) -> set[str]:
    return set(engine.indexed_paths())


def test_applied_changes_leave_the_index_as_a_full_run_would(engine: Engine, root: Path) -> None:
    before = indexed(engine)
    assert before == {"a.md", "guides/b.md", "deep/er/d.md", "vendor/gen.md"}
    (root / "a.md").write_text("# A\n\nThe zebrafinch text.\n", encoding="utf-8")
    (root / "new").mkdir()
    (root / "new/e.md").write_text("# E\n\nNew text.\n", encoding="utf-8")
    import shutil

    shutil.rmtree(root / "deep")
    changes = ChangeSet(files=frozenset({"a.md"}), folders=frozenset({"new"}), gone=frozenset({"deep", "never.md"}))
    outcome = engine.apply_changes(changes, limit=10, why="test")
    assert outcome.refreshed == 3 and outcome.text_changed and not outcome.run
    assert indexed(engine) == {"a.md", "guides/b.md", "new/e.md", "vendor/gen.md"}
    assert {h.file_path for h in engine.search(SearchRequest("zebrafinch")).results} == {"a.md"}
    assert engine.apply_changes(ChangeSet(), limit=10, why="test") == type(outcome)()  # nothing to do


def test_more_changes_than_the_limit_are_one_run(engine: Engine, root: Path) -> None:
    for i in range(5):
        (root / f"m{i}.md").write_text(f"# M{i}\n", encoding="utf-8")
    outcome = engine.apply_changes(ChangeSet(folders=frozenset({""})), limit=3, why="test")  # no scheduler: runs here
    assert outcome.run and not outcome.refreshed
    assert {f"m{i}.md" for i in range(5)} <= indexed(engine)


def test_a_probe_finds_what_changed(engine: Engine, root: Path) -> None:
    os.remove(root / "a.md")
    (root / "guides/b.md").write_text("# B\n\nThe quokkaword text.\n", encoding="utf-8")
    outcome = engine.apply_changes(PROBE, limit=10, why="test")
    assert outcome.refreshed >= 2 and outcome.text_changed  # the two files (and the folders whose mtime moved)
    assert "a.md" not in indexed(engine)
    assert {h.file_path for h in engine.search(SearchRequest("quokkaword")).results} == {"guides/b.md"}
