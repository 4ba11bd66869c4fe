"""The walk's ignore rules are git's (issue 13, case 033): for generated trees of folders,
Markdown files and nested ``.gitignore`` files with ``!`` negations, anchored patterns and
folder patterns, the files the walk (and ``walk_one``, the single-path check a refresh uses)
keeps are exactly the ``.md`` files ``git ls-files --others --exclude-standard`` lists.
Skipped when git is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from markdown_memory.files.walk import WalkEntry, walk_markdown, walk_one

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git to compare against")

DIRS = ["", "a", "b", "build", "a/b", "a/build", "b/build", "build/a"]
FILES = ["x.md", "y.md", "k.draft.md", "Notes.md"]
LINES = [
    "*.md", "!*.md", "*", "!*/", "build/", "!build/", "/x.md", "!x.md", "x.md", "a/", "!a/", "a/x.md",
    "!a/x.md", "**/y.md", "!**/y.md", "*.draft.md", "!k.draft.md", "!*.draft.md", "b/**", "!b/**/x.md",
    "/a", "a/*", "!a/b/", "docs", "!docs/", "b/x.md", "/b/", "**/build", "k*", "!y*", "*/x.md",
    "[xy].md", "!Notes.md", "# comment", "", "a/**/x.md", "!/build", "build", "*/", "!a", "**/a/",
    "/*", "!/*.md", "docs/*", "!docs/a/", "N*.md",
]
#: git reads no global or system ignore file during the comparison
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": tempfile.gettempdir()}

TREE = st.fixed_dictionaries({
    "files": st.lists(st.tuples(st.sampled_from(DIRS), st.sampled_from(FILES)), min_size=1, max_size=20, unique=True),
    "ignores": st.dictionaries(st.sampled_from(DIRS), st.lists(st.sampled_from(LINES), min_size=1, max_size=5),
                               min_size=1, max_size=4),
})


def build(root: Path, tree: dict) -> list[str]:
    files = []
    for folder, name in tree["files"]:
        rel = f"{folder}/{name}" if folder else name
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
        files.append(rel)
    for folder, lines in tree["ignores"].items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitignore").write_text("\n".join(lines) + "\n")
    return sorted(files)


def git_kept(root: Path, *, init: bool = True) -> list[str]:
    """The ``.md`` files git lists as untracked and not ignored under ``root`` (made a repository
    first unless ``init`` is False: it already is one, with nothing tracked)."""
    if init:
        subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--others", "--exclude-standard"],
                         check=True, capture_output=True, env=GIT_ENV).stdout.decode()
    return sorted(p for p in out.split("\0") if p.endswith(".md"))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=TREE)
# regression (found by this test in CI): ``b/**`` ignores what is inside b, not b itself, so
# ``!*.md`` re-includes b/x.md
@example(tree={"files": [("b", "x.md")], "ignores": {"": ["b/**", "!*.md"]}})
@example(tree={"files": [("b/c", "x.md")], "ignores": {"": ["b/**", "!*.md"]}})
def test_case_033_walk_keeps_exactly_what_git_keeps(repo: Path, tree: dict) -> None:
    for entry in repo.iterdir():  # the previous example's tree goes, the empty repository stays
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    files = build(repo, tree)
    expected = git_kept(repo, init=False)
    walked = [e.rel for e in walk_markdown(repo).files]
    assert walked == expected, tree
    single = [rel for rel in files if isinstance(walk_one(repo, rel), WalkEntry)]
    assert single == expected, tree


@pytest.fixture(scope="module")
def repo():
    """One empty git repository for every example (``git init`` once, not once per example)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True, env=GIT_ENV)
        yield Path(tmp)


def test_case_033_nested_negations_from_the_case(tmp_path: Path) -> None:
    """The case's tree (its generator copied into tests/fixtures/cases): the 8 pages git keeps."""
    gen = Path(__file__).parent / "fixtures" / "cases" / "033-nested-gitignore-negation" / "gen_layout.py"
    subprocess.run(["python3", str(gen), str(tmp_path)], check=True)
    assert [e.rel for e in walk_markdown(tmp_path).files] == git_kept(tmp_path) == [
        "guides/intro.md", "guides/keep.draft.md", "readme.md", "sub/scratch.md", "team/build/report.md",
        "team/sub/local.md", "vendor/lib/api.md", "vendor/top.md"]
