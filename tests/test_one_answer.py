"""One engine, one answer: the CLI (`markdown-memory search --json`, a real subprocess) and the
MCP server (a real stdio session) answer the same query on the same index with the same ranked
hits, vectors included (the server ranks with its in-memory quantized vectors, the CLI with
sqlite-vec's exact scan); where a budget shortens one list, it is a prefix of the other."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

from test_server import FIXTURES, McpClient, server_env

QUERIES = ["set a network timeout", "how do I install it on macOS", "uploads are slow",
           "environment variables for logging", "what changed in version 2"]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory):
    """(cli(query, *args) -> answer dict, mcp client): one minilm index of a copy of the guide,
    built by the CLI and served by the MCP server (no indexing of its own)."""
    base = tmp_path_factory.mktemp("one-answer")
    root = base / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    env = server_env(root, base / "index.db", base / "home", "minilm", MARKDOWN_MEMORY_AUTO_INDEX="0")

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "markdown_memory.cli", *args, "--json"], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    assert not cli("index")["failed"]
    client = McpClient(env, base / "stderr.log")
    answers: dict[tuple[str, ...], dict[str, Any]] = {}

    def search(query: str, *args: str) -> dict[str, Any]:
        # the index does not change (--no-refresh, no auto-index): one search is run once, and
        # the budget tests share their unbudgeted list instead of running it three times
        key = (query, *args)
        if key not in answers:
            answers[key] = cli("search", query, "--no-refresh", *args)
        return answers[key]

    yield search, client
    client.close()


def _ranked(answer: dict[str, Any]) -> list[tuple[str, str, int, float]]:
    return [(h["file_path"], h["heading_path"], h["start_line"], h["score"]) for h in answer["results"]]


@pytest.mark.parametrize("query", QUERIES)
def test_cli_and_mcp_give_the_same_ranked_hits(both, query: str) -> None:
    cli, client = both
    is_error, served = client.call("search_docs", {"query": query, "resend": True})
    assert not is_error, served
    printed = cli(query)
    assert printed["keyword_only"] is False and served["keyword_only"] is False
    assert _ranked(printed) == _ranked(served)
    assert [h.get("content") for h in printed["results"]] == [h.get("content") for h in served["results"]]


@pytest.mark.parametrize("max_tokens", [500, 800, 1200])
def test_a_budget_shortens_both_lists_alike(both, max_tokens: int) -> None:
    """One budget measure for both adapters: the same hits at the same budget, and the list a
    smaller budget keeps is a prefix of the full one."""
    cli, client = both
    query = QUERIES[0]
    _is_error, served = client.call("search_docs", {"query": query, "top_k": 10, "max_tokens": max_tokens,
                                                    "resend": True})
    printed = cli(query, "--top-k", "10", "--max-tokens", str(max_tokens))
    assert _ranked(printed) == _ranked(served)
    full = _ranked(cli(query, "--top-k", "10"))
    assert _ranked(printed) and full[: len(_ranked(printed))] == _ranked(printed)
