"""The file watcher (service/watch.py): an edit, a new file, a delete and a rename reach search
without a call noticing them; the polling fallback; a mass change costs a bounded number of
index runs; stop() ends the thread. Real files, a real engine (keyword only, for speed); every
wait polls with a deadline, nothing asserts a duration."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.models import SearchRequest
from markdown_memory.service.watch import Watcher, filesystem_type, polling_reason, start_watching

DEADLINE = 20.0  # seconds: generous on a loaded machine; a pass is usually well under 1 s


def wait_for(check: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    """Poll ``check`` until true; fail naming ``what`` after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"not within {deadline:g} s: {what}")
        time.sleep(0.05)


def files_with(engine: Engine, word: str) -> set[str]:
    """The files of the hits whose keywords match ``word`` (the index as it stands: the call
    refreshes nothing)."""
    return {h.file_path for h in engine.search(SearchRequest(word, top_k=20)).results if "keyword" in h.matched_by}


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Callable[..., tuple[Engine, Watcher, Path]]]:
    """``watched(mode="native", files=3, db_inside=False)`` -> (engine, watcher, root): a docs
    root of ``files`` small documents, indexed, watched. Stopped and shut down afterwards."""
    made: list[tuple[Engine, Watcher]] = []

    def make(mode: str | None = "native", files: int = 3, db_inside: bool = False,
             mass_change: int = 200) -> tuple[Engine, Watcher, Path]:
        root = tmp_path / "docs"
        root.mkdir()
        for i in range(files):
            (root / f"doc{i}.md").write_text(f"# Document {i}\n\nPlain text number {i}.\n", encoding="utf-8")
        db = (root / "index.db") if db_inside else (tmp_path / "index.db")
        engine = Engine(Settings.load(root, db, "none"), background=True)
        engine.index()
        watcher = start_watching(engine, mode=mode, mass_change=mass_change)
        made.append((engine, watcher))
        assert watcher.ready.wait(DEADLINE)
        return engine, watcher, root

    yield make
    for engine, watcher in made:
        watcher.stop()
        engine.shutdown()
        engine.close()


@pytest.mark.parametrize("mode", ["native", "poll"])
def test_edit_new_delete_and_rename_reach_search(watched, mode):
    engine, watcher, root = watched(mode)
    assert watcher.polling is (mode == "poll")

    with (root / "doc1.md").open("a", encoding="utf-8") as fh:  # an edit
        fh.write("\nThe zyxwedited marker.\n")
    wait_for(lambda: files_with(engine, "zyxwedited") == {"doc1.md"}, "the edited text is found")

    (root / "guides").mkdir()  # a new file in a new folder
    (root / "guides" / "new.md").write_text("# New\n\nThe qwvnewfile marker.\n", encoding="utf-8")
    wait_for(lambda: files_with(engine, "qwvnewfile") == {"guides/new.md"}, "the new file is found")

    (root / "doc1.md").unlink()  # a delete
    wait_for(lambda: not files_with(engine, "zyxwedited"), "the deleted file is gone from search")
    assert "doc1.md" not in engine.indexed_paths()

    (root / "guides" / "new.md").rename(root / "renamed.md")  # a rename
    wait_for(lambda: files_with(engine, "qwvnewfile") == {"renamed.md"}, "the renamed file is found under its new name")
    assert "guides/new.md" not in engine.indexed_paths()


def test_a_moved_folder_and_ignored_files(watched):
    engine, _watcher, root = watched()
    (root / ".gitignore").write_text("drafts/\n", encoding="utf-8")
    wait_for(lambda: not engine.indexing, "the run after the ignore file ends")
    (root / "drafts").mkdir()
    (root / "drafts" / "wip.md").write_text("# WIP\n\nThe ignoredzq marker.\n", encoding="utf-8")
    (root / "notes.txt").write_text("not Markdown", encoding="utf-8")
    outside = root.parent / "elsewhere"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "moved.md").write_text("# Moved\n\nThe movedinzq marker.\n", encoding="utf-8")
    outside.rename(root / "team")  # a folder moved in: no event per file
    wait_for(lambda: files_with(engine, "movedinzq") == {"team/sub/moved.md"}, "the moved-in folder's file is found")
    assert not files_with(engine, "ignoredzq")  # .gitignore'd: never indexed
    (root / "team").rename(root.parent / "gone")  # and moved away again
    wait_for(lambda: not files_with(engine, "movedinzq"), "the moved-away folder's file leaves search")


class _FailingNotify:
    """Stands in for watchfiles' Rust watcher where native watching fails: at once (the inotify
    watch limit on a big tree) or on the first wait (a new folder past the limit)."""

    fail_at_start = True

    def __init__(self, *args: object) -> None:
        if self.fail_at_start:
            raise OSError("OS file watch limit reached. about [\"/docs\"]")

    def __enter__(self) -> _FailingNotify:
        return self

    def __exit__(self, *args: object) -> None:
        pass

    def watch(self, *args: object) -> object:
        raise RuntimeError("error in underlying watcher: OS file watch limit reached")


@pytest.mark.parametrize("at_start", [True, False], ids=["at-start", "mid-watch"])
def test_native_failure_falls_back_to_polling(watched, monkeypatch, caplog, at_start):
    import watchfiles._rust_notify

    monkeypatch.setattr(_FailingNotify, "fail_at_start", at_start)
    monkeypatch.setattr(watchfiles._rust_notify, "RustNotify", _FailingNotify)
    monkeypatch.setenv("MARKDOWN_MEMORY_WATCH", "auto")
    engine, watcher, root = watched(mode=None)
    (root / "doc0.md").write_text("# Document 0\n\nThe fallbackzq marker.\n", encoding="utf-8")
    wait_for(lambda: files_with(engine, "fallbackzq") == {"doc0.md"}, "the edit is found by polling")
    assert watcher.polling and watcher.alive
    said = [r.getMessage() for r in caplog.records if "polling" in r.getMessage()]
    assert len(said) == 1 and "watch limit" in said[0], said  # once, with the reason


def test_polling_is_chosen_by_the_environment(watched, monkeypatch):
    monkeypatch.setenv("MARKDOWN_MEMORY_WATCH", "poll")
    engine, watcher, root = watched(mode=None)
    assert watcher.polling
    (root / "doc2.md").write_text("# Document 2\n\nThe envpollzq marker.\n", encoding="utf-8")
    wait_for(lambda: files_with(engine, "envpollzq") == {"doc2.md"}, "the edit is found by polling")


def test_database_inside_the_root_does_not_loop(watched):
    engine, watcher, root = watched(db_inside=True)
    (root / "doc0.md").write_text("# Document 0\n\nThe loopcheckzq marker.\n", encoding="utf-8")
    wait_for(lambda: files_with(engine, "loopcheckzq") == {"doc0.md"}, "the edit is found")
    settled = (watcher.stats.refreshes, watcher.stats.full_runs)
    engine.index()  # index writes to index.db, -wal, -shm, .lock, .run inside the root
    engine.search(SearchRequest("loopcheckzq"))
    time.sleep(1.0)  # a loop would show up as more refreshes or runs within this second
    assert (watcher.stats.refreshes, watcher.stats.full_runs) == settled


@pytest.mark.slow  # indexes 2,000 files twice (~10 s quiet, more on a loaded machine)
@pytest.mark.parametrize(("mode", "files"), [("native", 2_000), ("poll", 600)])
def test_mass_change_is_one_run_not_thousands_of_refreshes(watched, mode, files):
    engine, watcher, root = watched(mode, files=files, mass_change=100)
    assert watcher.stats.refreshes == 0
    for i in range(files):
        (root / f"doc{i}.md").write_text(f"# Document {i}\n\nThe massedit{i}zq marker.\n", encoding="utf-8")
    last = files - 1
    # a loaded 2-CPU machine parses ~50 files/s: the deadline is a safety net, not a target
    wait_for(lambda: files_with(engine, f"massedit{last}zq") == {f"doc{last}.md"}, "the last file's new text is found",
             deadline=300)
    wait_for(lambda: not engine.indexing, "the runs end", deadline=300)
    for i in (0, files // 3, files // 2):
        assert files_with(engine, f"massedit{i}zq") == {f"doc{i}.md"}
    stats = watcher.stats
    assert stats.full_runs <= 5, stats  # a handful of runs, whatever the number of groups
    assert stats.refreshed < files // 2, stats  # never a refresh per file for the bulk
    assert engine.status().counts.documents == files


def test_stop_ends_the_thread(watched):
    engine, watcher, root = watched()
    assert watcher.alive
    assert watcher.stop()
    assert not watcher.alive
    (root / "doc2.md").write_text("# Document 2\n\nThe afterstopzq marker.\n", encoding="utf-8")
    time.sleep(0.8)  # what a running watcher would have needed to refresh it
    assert not files_with(engine, "afterstopzq")


def test_off_mode_starts_no_thread(watched):
    _engine, watcher, _root = watched(mode="off")
    assert not watcher.alive
    assert watcher.stop()


def test_file_system_type_of_a_local_folder(tmp_path):
    fstype = filesystem_type(tmp_path)
    if fstype is None:
        pytest.skip("no /proc/self/mounts here")
    assert fstype  # the local temp folder's, e.g. ext4, tmpfs, overlay
    assert polling_reason(tmp_path) is None or fstype.startswith(("fuse", "9p", "nfs"))


def test_scope_check_agrees_with_the_walk(tmp_path):
    """The watcher's per-path verdict (files.walk.ScopeCheck) is the walk's: same files."""
    from markdown_memory.files.walk import ScopeCheck, walk_markdown

    root = tmp_path / "docs"
    tree = {
        ".gitignore": "*.draft.md\nbuild/\n/top-only.md\n",
        "guides/.gitignore": "!keep.draft.md\nprivate/\n",
        "guides/.markdown-memory-ignore": "fixtures/\n",
        "api/.markdown-memory-ignore": "old.md\n",
    }
    for rel in ("a.md", "b.draft.md", "top-only.md", "sub/top-only.md", "build/out.md", "guides/keep.draft.md",
                "guides/other.draft.md", "guides/private/x.md", "guides/fixtures/y.md", "guides/ok.mdx",
                "api/old.md", "api/new.markdown", "node_modules/pkg/readme.md", ".hidden/z.md", "venv/lib/q.md",
                "env-docs/r.md", "notes.txt", "x.rmd", "vendor/gen.md", "deep/er/still.md"):
        tree[rel] = "# T\n\ntext\n"
    tree["venv/pyvenv.cfg"] = "home = /usr\n"
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    exclude = ["vendor/"]
    walked = {e.rel for e in walk_markdown(root, exclude).files}
    check = ScopeCheck(root, exclude)
    judged = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert {rel for rel in judged if check.file(rel)} == walked
    assert "guides/keep.draft.md" in walked and "env-docs/r.md" in walked  # the tree tests something


def test_a_deleted_root_is_said_once_without_a_traceback(watched, caplog):
    """Polling a docs root deleted while served (the HTTP service's case): one log line naming
    the problem, not a traceback every half second."""
    import logging
    import shutil

    engine, watcher, root = watched(mode="poll")
    with caplog.at_level(logging.INFO, logger="markdown_memory"):
        shutil.rmtree(root)
        wait_for(lambda: watcher.stats.errors >= 3, "three probes of the missing root")
    probes = [r for r in caplog.records if "probing" in r.getMessage()]
    assert len(probes) == 1 and not probes[0].exc_info and "no longer exists" in probes[0].getMessage()


@pytest.mark.parametrize("where", ["same folder", "other folder"])
def test_a_change_made_while_a_refresh_runs_is_found_by_the_next_probe(tmp_path, monkeypatch, where):
    """The polled rename (the flake of test_edit_new_delete_and_rename_reach_search[poll]): a
    rename made after a refresh wrote its documents but before it recorded the folders' mtimes
    hid behind the mtime recorded after it. The change is made at exactly that point here."""
    from markdown_memory.index import runs

    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / "doc1.md").write_text("# One\n\nThe firstzq marker.\n", encoding="utf-8")
    (root / "guides" / "new.md").write_text("# New\n\nThe racyrenamezq marker.\n", encoding="utf-8")
    engine = Engine(Settings.load(root, tmp_path / "index.db", "none"))
    try:
        engine.index()
        original = runs.refresh_paths

        def refresh_then_rename(*args, **kwargs):
            report = original(*args, **kwargs)
            target = root / "renamed.md" if where == "same folder" else root / "guides" / "moved.md"
            (root / "guides" / "new.md").rename(target)  # between the documents' commit and the folders' record
            return report

        (root / "doc1.md").unlink()
        monkeypatch.setattr(runs, "refresh_paths", refresh_then_rename)
        engine.refresh(["doc1.md"])
        monkeypatch.setattr(runs, "refresh_paths", original)
        engine.refresh()  # the next probe
        expected = "renamed.md" if where == "same folder" else "guides/moved.md"
        assert files_with(engine, "racyrenamezq") == {expected}
        assert "guides/new.md" not in engine.indexed_paths()
    finally:
        engine.close()
