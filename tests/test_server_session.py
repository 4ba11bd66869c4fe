"""Session memory of the MCP server (issue 15): a section whose text search_docs already sent in
full comes back in later answers of the same server as a pointer marked ``already_sent``, so the
budget goes to text the agent has not seen; ``resend`` turns it off; an edited section is new;
read_section always returns the text. A real stdio server over a copy of tests/fixtures/guide
(keyword-only, auto-index on so an edit is picked up before the next answer)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_server import FIXTURES, McpClient, server_env

#: a query whose first answer (budget 450) carries three sections in full and has no room for
#: the next ones (keyword-only ranking of the guide, deterministic)
QUERY = "upload retries proxy timeout"
BUDGET = 500


@pytest.fixture
def session(tmp_path: Path):
    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    client = McpClient(server_env(root, tmp_path / "index.db", tmp_path / "home", "none"), tmp_path / "stderr.log")
    is_error, report = client.call("index_directory")
    assert not is_error, report
    yield client, root
    client.close()


def _search(client: McpClient, **arguments) -> dict:
    is_error, body = client.call("search_docs", {"query": QUERY, "max_tokens": BUDGET, **arguments})
    assert not is_error, body
    return body


def _sent(body: dict) -> dict[str, str]:
    """heading_path -> content of the hits that carry their text."""
    return {h["heading_path"]: h["content"] for h in body["results"] if "content" in h}


def test_second_search_gets_already_sent_pointers_and_spends_its_budget_on_new_text(session) -> None:
    client, _root = session
    first = _search(client, top_k=2)
    first_text = _sent(first)
    assert len(first_text) == 2
    assert not any("already_sent" in h for h in first["results"])

    second = _search(client, top_k=5)
    by_heading = {h["heading_path"]: h for h in second["results"]}
    for heading in first_text:  # every text already sent is a pointer marked so, with its preview
        hit = by_heading[heading]
        assert hit["already_sent"] is True and "content" not in hit
        assert hit["preview"] and hit["file_path"] and hit["start_line"] >= 1
    new_text = _sent(second)
    assert new_text, "the budget must go to the sections not sent yet"
    assert not set(new_text) & set(first_text)


def test_resend_true_sends_the_texts_again(session) -> None:
    client, _root = session
    first_text = _sent(_search(client))
    again = _search(client, resend=True)
    assert _sent(again) == first_text
    assert not any("already_sent" in h for h in again["results"])
    schema = {t.name: t for t in client.list_tools()}["search_docs"].input_schema["properties"]["resend"]
    assert schema["type"] == "boolean" and schema["default"] is False


def test_an_edited_section_is_sent_again(session) -> None:
    client, root = session
    first_text = _sent(_search(client))
    heading = "Configuration > Network timeouts"
    assert heading in first_text
    path = root / "configuration.md"
    text = path.read_text(encoding="utf-8")
    added = "Behind a proxy the timeout applies to each retry separately."
    path.write_text(text.replace("raise `connect_timeout` in the `[network]` table.",
                                 "raise `connect_timeout` in the `[network]` table.\n" + added), encoding="utf-8")
    second = _search(client)
    hit = next(h for h in second["results"] if h["heading_path"] == heading)
    assert "already_sent" not in hit and added in hit["content"]
    # the section of the same file whose text did not change stays a pointer
    unchanged = next(h for h in second["results"] if h["heading_path"] == "Configuration > Environment variables")
    assert unchanged["already_sent"] is True


def test_read_section_returns_the_text_of_a_section_already_sent(session) -> None:
    client, _root = session
    first_text = _sent(_search(client))
    heading = "Configuration > Network timeouts"
    is_error, body = client.call("read_section", {"file_path": "configuration.md", "heading_path": heading})
    assert not is_error and body["content"].strip() == first_text[heading].strip()
