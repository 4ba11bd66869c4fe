"""Two MCP servers on one docs root and one index (as desktop clients start them), each asked
20 searches at once while both start background indexing: every call succeeds, nothing reports
"database is locked", and the index is intact afterwards (case 025, server part)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from markdown_memory.store.testing import check_file
from test_server import McpClient, server_env


def write_docs(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"component-{i:03d}.md").write_text(
            f"# Component {i}\n\nComponent {i} handles part {i} of the pipeline.\n\n"
            f"## Settings\n\nSet `COMPONENT_{i}_LIMIT` to bound its queue.\n",
            encoding="utf-8",
        )


def test_case_025_two_servers_twenty_parallel_searches_each(tmp_path):
    root = tmp_path / "docs"
    write_docs(root, 300)
    db = tmp_path / "index.db"
    clients = [
        McpClient(server_env(root, db, tmp_path / f"home{k}", "none"), tmp_path / f"stderr{k}.log")
        for k in range(2)
    ]
    try:
        def ask(job: tuple[int, int]) -> tuple[bool, object]:
            client, i = clients[job[0]], job[1]
            return client.call("search_docs", {"query": f"COMPONENT_{i * 7}_LIMIT"})

        with ThreadPoolExecutor(max_workers=40) as pool:
            answers = list(pool.map(ask, [(k, i) for k in range(2) for i in range(20)]))
        for is_error, body in answers:
            assert not is_error, body
            assert "locked" not in str(body).lower() and "busy" not in str(body).lower()
        # once the catch-up has run, exact identifiers answer from either server
        for client in clients:
            deadline = time.monotonic() + 180  # a safety net on a loaded machine, not a target
            while True:
                is_error, body = client.call("search_docs", {"query": "COMPONENT_42_LIMIT"})
                assert not is_error, body
                if (body["results"] and not body["index_status"]["indexing"]) or time.monotonic() > deadline:
                    break
                time.sleep(0.25)
            assert body["results"][0]["heading_path"] == "Component 42 > Settings"
    finally:
        for client in clients:
            client.close()
    for k in range(2):
        log = (tmp_path / f"stderr{k}.log").read_text(encoding="utf-8").lower()
        assert "database is locked" not in log and "traceback" not in log
    assert check_file(db).integrity == "ok"
