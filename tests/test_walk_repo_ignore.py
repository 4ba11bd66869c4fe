"""Git's ignore rules from outside the docs root count (issue 37, case 057): for generated
repositories whose docs root is a sub-folder, with rules in ``.gitignore`` files above and
inside it, ``.git/info/exclude`` and ``core.excludesFile`` (its default
``$XDG_CONFIG_HOME/git/ignore`` and a path set in the repository's config), the walk keeps
exactly the ``.md`` files ``git ls-files --cached --others --exclude-standard`` lists, in a checkout and
in a linked worktree (whose ``.git`` is a file). Case 057 runs through the CLI and MCP.
Skipped when git is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from case_cli import Cli
from markdown_memory.config import Settings
from markdown_memory.files.walk import ScopeCheck, walk_markdown, walk_one
from markdown_memory.mcp.runtime import Runtime

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git to compare against")

CASE = Path(__file__).parent / "fixtures" / "cases" / "057-git-ignore-above-root-and-worktree"
DIRS = ["docs", "docs/_build", "docs/a", "docs/a/_build", "docs/scratch"]
FILES = ["x.md", "y.md", "z.generated.md"]
LINES = ["docs/_build/", "_build/", "*.generated.md", "!*.generated.md", "docs/scratch/", "!docs/scratch/",
         "/docs/a/x.md", "x.md", "!x.md", "a/", "docs/a/*", "!docs/a/y.md", "**/y.md", "docs/*.md", "!docs/x.md"]
#: where a generated rule list goes: the repository's .gitignore, the docs root's own, info/exclude,
#: the default global excludes file, a core.excludesFile named in the repository's config
SOURCES = ["top", "docs", "exclude", "global", "configured"]

REPO = st.fixed_dictionaries({
    "files": st.lists(st.tuples(st.sampled_from(DIRS), st.sampled_from(FILES)), min_size=1, max_size=12, unique=True),
    "rules": st.dictionaries(st.sampled_from(SOURCES), st.lists(st.sampled_from(LINES), min_size=1, max_size=4),
                             min_size=1, max_size=5),
})


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(base: Path, repo: dict, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """repo/ with the generated files and rules; returns (repo, the env git and the walk share)."""
    top, xdg = base / "repo", base / "xdg"
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg), "HOME": str(base), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    env.pop("GIT_CONFIG_GLOBAL", None)
    for key in ("XDG_CONFIG_HOME", "HOME", "GIT_CONFIG_NOSYSTEM"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    (top / "docs").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=top, env=env)
    for folder, name in repo["files"]:
        (top / folder).mkdir(parents=True, exist_ok=True)
        (top / folder / name).write_text(f"# {folder}/{name}\n")
    rules = repo["rules"]
    where = {"top": top / ".gitignore", "docs": top / "docs" / ".gitignore", "exclude": top / ".git" / "info" / "exclude",
             "global": xdg / "git" / "ignore", "configured": base / "my-excludes"}
    for source, lines in rules.items():
        where[source].parent.mkdir(parents=True, exist_ok=True)
        where[source].write_text("\n".join(lines) + "\n")
    if "configured" in rules:
        git("config", "core.excludesFile", str(where["configured"]), cwd=top, env=env)
    return top, env


def git_kept(docs: Path, env: dict[str, str]) -> list[str]:
    out = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=docs, env=env)
    return sorted(p for p in out.split("\0") if p.endswith(".md"))


def assert_walk_is_git(docs: Path, env: dict[str, str]) -> None:
    kept = git_kept(docs, env)
    assert [e.rel for e in walk_markdown(docs).files] == kept
    every = sorted(str(p.relative_to(docs)) for p in docs.rglob("*.md"))
    scope = ScopeCheck(docs)
    for rel in every:
        assert (walk_one(docs, rel) != "") == (rel in kept), rel
        assert scope.file(rel) == (rel in kept), rel


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(REPO)
@example({"files": [("docs/_build", "x.md"), ("docs", "y.md")], "rules": {"top": ["docs/_build/"]}})
@example({"files": [("docs/scratch", "x.md"), ("docs", "y.md")], "rules": {"exclude": ["docs/scratch/"]}})
@example({"files": [("docs", "z.generated.md")], "rules": {"global": ["*.generated.md"]}})
@example({"files": [("docs", "z.generated.md")], "rules": {"global": ["*.generated.md"], "docs": ["!*.generated.md"]}})
@example({"files": [("docs", "x.md")], "rules": {"configured": ["x.md"], "exclude": ["!x.md"]}})
def test_walk_keeps_what_git_keeps_with_rules_above_the_root(tmp_path_factory, monkeypatch, repo: dict) -> None:
    with monkeypatch.context() as patch:
        top, env = make_repo(tmp_path_factory.mktemp("repo"), repo, patch)
        assert_walk_is_git(top / "docs", env)


def test_a_worktree_reads_the_common_exclude_and_its_own_gitignores(tmp_path, monkeypatch):
    repo = {"files": [("docs", "x.md")], "rules": {"top": ["*.generated.md"], "exclude": ["docs/scratch/"]}}
    top, env = make_repo(tmp_path, repo, monkeypatch)
    git("add", "-A", cwd=top, env=env)
    git("commit", "-q", "-m", "x", cwd=top, env=env)
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", str(wt), "-b", "other", cwd=top, env=env)
    assert (wt / ".git").is_file()
    for folder, name in [("docs/scratch", "s.md"), ("docs", "a.generated.md"), ("docs/a", "y.md")]:
        (wt / folder).mkdir(parents=True, exist_ok=True)
        (wt / folder / name).write_text("# x\n")
    assert_walk_is_git(wt / "docs", env)
    assert [e.rel for e in walk_markdown(wt / "docs").files] == ["a/y.md", "x.md"]


def test_outside_a_repository_no_global_rule_applies(tmp_path, monkeypatch):
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "ignore").write_text("*.md\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("# x\n")
    assert [e.rel for e in walk_markdown(tmp_path / "docs").files] == ["x.md"]


# -- case 057 through the CLI and MCP --------------------------------------------------------------
# Sources: atom/fuzzy-finder#120, ggreer/the_silver_searcher#883, zed-industries/community#85,
# watchexec/cargo-watch#303 (case.md)
@pytest.fixture
def case_057(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    subprocess.run([sys.executable, str(CASE / "gen_repo.py"), str(tmp_path)], check=True, capture_output=True)
    return tmp_path


@pytest.mark.parametrize("checkout", ["repo", "wt"])
def test_case_057_cli_lists_and_finds_only_what_git_tracks(case_057, cli_main, checkout):
    cli = Cli(cli_main, case_057 / checkout / "docs", case_057 / f"{checkout}.db")
    assert cli.listed() == {"guide.md", "index.md"}
    for token in ("buildcopytoken", "generatedapitoken", "scratchnotetoken"):
        assert cli("search", token)["results"] == [], token
    assert cli.first("homepagetoken")[0] == "index.md"


@pytest.mark.parametrize("checkout", ["repo", "wt"])
def test_case_057_mcp_list_documents_and_search(case_057, checkout):
    from markdown_memory.models import SearchRequest

    runtime = Runtime(Settings.load(case_057 / checkout / "docs", case_057 / f"{checkout}-mcp.db", "none", auto_index=False))

    def call(tool, fn):
        result = anyio.run(runtime.call, tool, fn)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    try:
        call("index_directory", lambda: runtime.index_directory(None, False))
        assert {d["path"] for d in call("list_documents", lambda: runtime.list_documents(None, 0))["documents"]} == {
            "guide.md", "index.md"}
        assert call("search_docs", lambda: runtime.search_docs(SearchRequest("buildcopytoken")))["results"] == []
        assert call("search_docs", lambda: runtime.search_docs(SearchRequest("homepagetoken")))["results"][0][
            "file_path"] == "index.md"
    finally:
        runtime.shutdown()
