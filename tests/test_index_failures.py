"""Why a file is not indexed is decided where the fact is known (``files.failure.Failure``):
symbolic links the walk does not follow and files left out by name are warnings, everything
else (special files, binary, too large, unreadable) is a failed file, whatever the wording."""

from __future__ import annotations

import os

import pytest

from markdown_memory.files.failure import Failure, FailureKind
from markdown_memory.files.walk import walk_markdown


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nbody\n")
    (root / "binary.md").write_bytes(b"# B\n\x00\x01")
    (root / "notes.qmd").write_text("# Quarto\n")
    os.symlink("missing.md", root / "dangling.md")
    os.symlink("self.md", root / "self.md")  # a loop: ELOOP
    os.symlink(tmp_path, root / "up")  # a folder outside the root
    os.mkfifo(root / "pipe.md")
    return root


def test_walk_tags_each_problem_with_its_kind(tree):
    walk = walk_markdown(tree)
    kinds = {f.path: f.kind for f in walk.problems}
    assert kinds == {"dangling.md": FailureKind.SYMLINK, "self.md": FailureKind.SYMLINK,
                     "up": FailureKind.SYMLINK, "pipe.md": FailureKind.SPECIAL}
    assert [rel for rel, _ in walk.skipped] == ["notes.qmd"]


def test_index_reports_warnings_and_failures_by_kind(tree, make_engine):
    report = make_engine(tree, embedder="none").index()
    assert sorted(f["path"] for f in report.failed) == ["binary.md", "pipe.md"]
    assert sorted(w["path"] for w in report.warnings) == ["dangling.md", "notes.qmd", "self.md", "up"]
    loop = next(w["message"] for w in report.warnings if w["path"] == "self.md")
    assert "symbolic links (ELOOP)" in loop  # the reported text is the OS error's, as before


def test_severity_follows_the_kind_not_the_message():
    assert Failure("a.md", FailureKind.UNREADABLE, "symbolic link mentioned").severity == "failed"
    assert Failure("a.md", FailureKind.SYMLINK, "anything").severity == "warning"
    assert Failure("a.qmd", FailureKind.SKIPPED, "anything").is_warning


@pytest.mark.parametrize("known", [False, True])
def test_a_file_deleted_during_the_run_is_removed_not_failed(tmp_path, make_engine, monkeypatch, known):
    """Regression (trial2): a file deleted between the walk and its read was reported as
    "not indexed: ...: not found (ENOENT)", the run "completed with 1 problem(s)", and `status`
    listed it as failed until the next run: the user deleted it, nothing went wrong."""
    from markdown_memory.index import indexer

    root = tmp_path / "docs"
    root.mkdir()
    (root / "stay.md").write_text("# Stay\n\nkept\n")
    (root / "gone.md").write_text("# Gone\n\ndeleted mid-run\n")
    engine = make_engine(root, embedder="none")
    if known:
        engine.index()
        (root / "gone.md").write_text("# Gone\n\nedited, then deleted mid-run\n")
    real_walk = indexer.walk_markdown

    def walk_then_delete(*args, **kwargs):
        walked = real_walk(*args, **kwargs)
        (root / "gone.md").unlink()  # after the walk listed it, before it is read
        return walked

    monkeypatch.setattr(indexer, "walk_markdown", walk_then_delete)
    report = engine.index()
    assert not report.failed and not report.warnings, report
    assert report.removed == (1 if known else 0)
    assert [d.path for d in engine.list_documents().documents] == ["stay.md"]
    assert not engine.status().failures
