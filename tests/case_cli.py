"""The CLI as the case tests drive it: one docs root indexed keyword-only into its own database,
then any command with ``--json`` (shared by tests/test_cases_{folders,links,terms}.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Cli:
    """``markdown-memory --embedder none --db DB <command> ... --docs-dir ROOT --json``; ``report``
    is the first index run's report."""

    def __init__(self, cli_main: Any, root: Path, db: Path) -> None:
        self.cli_main, self.root, self.db = cli_main, root, db
        out = cli_main("--embedder", "none", "--db", str(db), "index", str(root), "--json")
        assert out.returncode == 0, out.stderr
        self.report = json.loads(out.stdout)

    def __call__(self, *args: str) -> dict:
        out = self.cli_main("--embedder", "none", "--db", str(self.db), *args, "--docs-dir", str(self.root), "--json")
        assert out.returncode == 0, (args, out.stdout, out.stderr)
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    def first(self, query: str) -> tuple[str, str]:
        """(file_path, heading_path) of the first hit for ``query`` (there must be one)."""
        results = self("search", "--", query)["results"]
        assert results, f"no result for {query!r}"
        return results[0]["file_path"], results[0]["heading_path"]

    def search_paths(self, query: str, *extra: str) -> set[str]:
        return {r["file_path"] for r in self("search", query, "--top-k", "20", *extra)["results"]}

    def listed(self, *folder: str) -> set[str]:
        return {d["path"] for d in self("list", *folder)["documents"]}


def mcp_call(runtime: Any, tool: str, fn: Any) -> dict:
    """``fn`` run as the MCP tool ``tool`` through ``runtime.call`` (worker thread, size cap,
    error payloads): its JSON answer, which must not be an error."""
    import anyio

    result = anyio.run(runtime.call, tool, fn)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]
