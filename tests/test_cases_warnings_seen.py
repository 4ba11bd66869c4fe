"""Cases 007 and 023 ask that a file indexed with a caveat (an unclosed fence repaired, invalid
front matter ignored) is reported with its file and line "in the CLI `index` summary and in
index_status or the outline". The summary is one run's; these check the lasting places: `status`
(text and JSON) after the run, and the `index_status` of an agent's search answer in a later
session, which never saw the run's report (a server indexes in the background)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from case_cli import Cli, mcp_call

CASES = Path(__file__).parent / "fixtures" / "cases"
#: case -> {file: words its warning must hold}
WARNED = {
    "007-unclosed-fence": {"unclosed.md": ("line 5", "fence"), "nested-outer-fence.md": ("line 13", "fence")},
    "023-invalid-frontmatter-yaml": {f"notes/{n}": ("front matter", "line") for n in (
        "backtick-path.md", "star-title.md", "wikilink-list.md", "unquoted-colon.md", "tab-indent.md")},
}


def _tree(case: str, dest: Path) -> Path:
    shutil.copytree(CASES / case, dest, ignore=shutil.ignore_patterns("case.md", "*.sh", "*.py"))
    return dest


def _check(failures: list[dict[str, str]], expected: dict[str, tuple[str, ...]]) -> None:
    seen = {f["path"]: f for f in failures}
    assert set(seen) == set(expected), failures
    for path, words in expected.items():
        assert seen[path]["kind"] == "warning" and all(w in seen[path]["reason"] for w in words), seen[path]


def test_cases_007_023_warnings_stay_in_status(tmp_path: Path, cli_main) -> None:
    for case, expected in WARNED.items():
        root = _tree(case, tmp_path / case)
        cli = Cli(cli_main, root, tmp_path / f"{case}.db")
        assert {w["path"] for w in cli.report["warnings"]} == set(expected)
        _check(cli("status")["failures"], expected)
        text = cli_main("--embedder", "none", "--db", str(tmp_path / f"{case}.db"), "status", "--docs-dir", str(root))
        for path in expected:
            assert any(line.startswith("warning") and path in line for line in text.stdout.splitlines()), text.stdout


@pytest.mark.parametrize("case", sorted(WARNED))
def test_cases_007_023_warnings_reach_an_agent_in_a_later_session(tmp_path: Path, case: str) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.models import SearchRequest

    root = _tree(case, tmp_path / case)
    db = tmp_path / f"{case}.db"
    first = Runtime(Settings.load(root, db, "none", auto_index=False))
    try:
        mcp_call(first, "index_directory", lambda: first.index_directory(None, False))
    finally:
        first.shutdown()
    later = Runtime(Settings.load(root, db, "none", auto_index=False))
    try:
        answer = mcp_call(later, "search_docs", lambda: later.search_docs(SearchRequest("the")))
    finally:
        later.shutdown()
    _check(answer["index_status"]["failures"], WARNED[case])
