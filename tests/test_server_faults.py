"""Hostile MCP input over a real stdio server process (issue 13's attack findings): requests
with ids MCP cannot take, malformed JSON-RPC lines, and numeric or boolean tool arguments of
the wrong type or out of range. Every request-like line gets exactly one answer, every bad
argument one sentence, and the server keeps serving.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from test_server_stdio import RawServer, _guide_server

# (raw line, the id its answer carries; NO_ANSWER: a notification, which JSON-RPC never answers)
NO_ANSWER = object()
BATTERY: list[tuple[bytes, object]] = [
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None),  # an unreadable id is answered with null
    (b'{"jsonrpc":"2.0","id":NaN,"method":"tools/list"}', None),  # NaN / Infinity are not JSON: never echoed
    (b'{"jsonrpc":"2.0","id":1e999999,"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":false,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":7.0,"method":"tools/list"}', None),
    (b'{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"x"}}}',
     None),
    (b'{"jsonrpc":"2.0","id":{}}', None),
    (b'{"jsonrpc":"2.0","id":100000000000000000000000,"method":"ping"}', 10**23),
    (b'{"jsonrpc":"2.0","id":-1,"method":"ping"}', -1),
    (b'{"jsonrpc":"2.0","id":"","method":"ping"}', ""),
    (b'{"jsonrpc":"2.0","id":501}', 501),  # no method
    (b'{"jsonrpc":"2.0","id":502,"method":5}', 502),
    (b'{"jsonrpc":"1.0","id":503,"method":"ping"}', 503),
    (b'{"id":504,"method":"ping"}', 504),
    (b'{"jsonrpc":"2.0","id":505,"method":"tools/list","params":[1,2]}', 505),
    (b'{"jsonrpc":"2.0","id":506,"method":"no/such/method"}', 506),
    (b'{"jsonrpc":"2.0","id":507,"method":"tools/call","params":{"name":"search_docs","arguments":[1]}}', 507),
    (b'[{"jsonrpc":"2.0","id":508,"method":"ping"}]', None),  # batches are not MCP
    (b"[]", None),
    (b"null", None),
    (b"42", None),
    (b"{not json", None),
    (b'{"jsonrpc":"2.0","method":"notifications/whatever"}', NO_ANSWER),
    (b'{"jsonrpc":"2.0","method":"tools/list"}', NO_ANSWER),  # no id: a notification, not answered
    (b'{"jsonrpc":"2.0","id":null,"result":{}}', NO_ANSWER),  # a (broken) response is never answered
]


def _answers(server: RawServer, since: int) -> list[dict]:
    return [json.loads(raw) for raw in server.stdout[since:]]


def test_every_request_with_an_invalid_id_or_shape_gets_exactly_one_answer(tmp_path: Path) -> None:
    server = _guide_server(tmp_path)
    try:
        server.initialize()
        before = len(server.stdout)
        for line, _ in BATTERY:
            server.send_line(line)
        is_error, answer = server.tool("search_docs", {"query": "install"}, timeout=30)
        assert not is_error and answer["results"], answer  # still serving
    finally:
        assert server.close_stdin_and_wait() == 0
        server.kill()
    server.assert_stdout_is_jsonrpc()  # after the exit, so every reply written is counted
    replies = _answers(server, before)
    replies = [r for r in replies if not (isinstance(r.get("result"), dict) and "content" in r["result"])]
    expected = [ident for _, ident in BATTERY if ident is not NO_ANSWER]
    got = [r["id"] for r in replies]
    # ids compare as JSON text so 7.0 and 7, or true and 1, are not confused
    assert sorted(json.dumps(i) for i in got) == sorted(json.dumps(i) for i in expected), got
    for reply in replies:
        if reply["id"] is None or isinstance(reply["id"], float):
            assert reply["error"]["code"] in (-32700, -32600), reply
    invalid = [r for r in replies if "is not a string or an integer" in r.get("error", {}).get("message", "")]
    # null, {"a":1}, [1], 1.5, NaN, 1e999999, -Infinity, true, false, 7.0, {} (a line without a method is -32600 too)
    assert len(invalid) == 11
    assert "Traceback" not in server.stderr_text


def test_lifecycle_not_initialized_then_one_initialize_per_connection(tmp_path: Path) -> None:
    server = _guide_server(tmp_path)
    try:
        early = server.request("tools/list", timeout=30)
        assert early["error"]["code"] == -32002 and "not initialized" in early["error"]["message"]
        assert "initialize" in early["error"]["message"].split("not initialized", 1)[1]
        assert server.request("ping", timeout=30)["result"] == {}  # ping is allowed before initialize
        first = server.request("initialize", {"protocolVersion": "1900-01-01", "capabilities": {},
                                              "clientInfo": {"name": "pytest", "version": "0"}}, timeout=30)
        from mcp_types import LATEST_PROTOCOL_VERSION

        offered = first["result"]["protocolVersion"]  # the spec: answer with a version it supports
        assert offered != "1900-01-01" and "2024-11-05" <= offered <= LATEST_PROTOCOL_VERSION
        server.send("notifications/initialized", notify=True)
        again = server.request("initialize", {"protocolVersion": "1900-01-01", "capabilities": {},
                                              "clientInfo": {"name": "pytest", "version": "0"}}, timeout=30)
        assert again["error"]["code"] == -32600 and "already initialized" in again["error"]["message"]
        tools = server.request("tools/list", timeout=30)["result"]["tools"]
        assert "search_docs" in {t["name"] for t in tools}  # still serving
    finally:
        assert server.close_stdin_and_wait() == 0
        server.kill()
    server.assert_stdout_is_jsonrpc()
    assert "Traceback" not in server.stderr_text


# (arguments, accepted?) per tool: the policy of mcp/tools.py (JSON integers in the schema's
# range, 3.0 counts as 3; booleans are true/false; nothing is coerced from strings or clamped)
ARGUMENTS = [
    ("list_documents", {"offset": 1e20}, False),
    ("list_documents", {"offset": 10**20}, False),
    ("list_documents", {"offset": 2**63}, False),
    ("list_documents", {"offset": -1}, False),
    ("list_documents", {"offset": "3"}, False),
    ("list_documents", {"offset": True}, False),
    ("list_documents", {"offset": 2.5}, False),
    ("list_documents", {"offset": None}, False),
    ("list_documents", {"offset": 1_000_000_001}, False),
    ("list_documents", {"offset": 1_000_000_000}, True),
    ("list_documents", {"offset": 2.0}, True),
    ("search_docs", {"query": "install", "top_k": 1e20}, False),
    ("search_docs", {"query": "install", "top_k": "3"}, False),
    ("search_docs", {"query": "install", "top_k": True}, False),
    ("search_docs", {"query": "install", "top_k": 0}, False),
    ("search_docs", {"query": "install", "top_k": 3.0}, True),
    ("search_docs", {"query": "install", "max_tokens": 10**30}, False),
    ("search_docs", {"query": "install", "max_tokens": -5}, False),
    ("search_docs", {"query": "install", "max_tokens": float("inf")}, False),
    ("search_docs", {"query": "install", "max_tokens": "2000"}, False),
    ("search_docs", {"query": "install", "max_tokens": 500}, True),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "cursor": 1e20}, False),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "cursor": 2**63}, False),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "cursor": -1}, False),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "cursor": "1"}, False),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "cursor": None}, True),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "include_subsections": "yes"}, False),
    ("read_section", {"file_path": "install.md", "heading_path": "Linux", "include_subsections": 1}, False),
    ("get_document_outline", {"file_path": "install.md", "max_depth": 1e20}, False),
    ("get_document_outline", {"file_path": "install.md", "max_depth": "2"}, False),
    ("get_document_outline", {"file_path": "install.md", "max_depth": 7}, False),
    ("get_document_outline", {"file_path": "install.md", "max_depth": 2}, True),
    ("index_directory", {"force": "false"}, False),
]


@pytest.fixture(scope="module")
def guide_server(tmp_path_factory: pytest.TempPathFactory):
    server = _guide_server(tmp_path_factory.mktemp("faults"))
    server.initialize()
    server.tool("index_directory", {}, timeout=60)
    yield server
    server.close_stdin_and_wait()
    server.kill()


@pytest.mark.parametrize(("tool", "arguments", "accepted"), ARGUMENTS)
def test_numeric_and_boolean_arguments_follow_one_policy(guide_server: RawServer, tool: str, arguments: dict,
                                                         accepted: bool) -> None:
    is_error, body = guide_server.tool(tool, arguments, timeout=30)
    if accepted:
        assert not is_error, body
        return
    assert is_error, body
    name = next(k for k in arguments if k not in ("query", "file_path", "heading_path"))
    message = body["error"]
    assert message.startswith(f"invalid arguments for {tool}: {name} must be "), message
    assert "internal error" not in message and "\n" not in message and len(message) < 200
    assert "true or false" in message if name in ("include_subsections", "force") else "whole number" in message


def test_list_documents_offset_1e20_is_one_sentence_naming_the_range(guide_server: RawServer) -> None:
    is_error, body = guide_server.tool("list_documents", {"offset": 1e20}, timeout=30)
    assert is_error
    assert body == {"error": "invalid arguments for list_documents: offset must be a whole number from 0 to "
                             "1000000000 (got 1e+20)"}
    assert guide_server.tool("list_documents", {"offset": 0}, timeout=30)[1]["total"] == 6
    assert "Traceback" not in guide_server.stderr_text


@pytest.mark.parametrize(("arguments", "kind"), [('"install"', "a string"), ("[1, 2]", "an array"), ("7", "a number"),
                                                 ("true", "a boolean")])
def test_tool_arguments_that_are_not_an_object_get_a_sentence_naming_the_shape(guide_server: RawServer,
                                                                              arguments: str, kind: str) -> None:
    """Trial finding: ``"arguments": "install"`` got the SDK's bare "Invalid request parameters"."""
    before = len(guide_server.stdout)
    line = '{"jsonrpc":"2.0","id":"bad-args","method":"tools/call","params":{"name":"search_docs","arguments":%s}}'
    guide_server.send_line((line % arguments).encode())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(r.get("id") == "bad-args" for r in _answers(guide_server, before)):
        time.sleep(0.05)
    reply = next(r for r in _answers(guide_server, before) if r.get("id") == "bad-args")
    assert reply["error"]["code"] == -32602
    message = reply["error"]["message"]
    assert "search_docs" in message and f"got {kind}" in message and "JSON object" in message
    is_error, body = guide_server.tool("search_docs", {"query": "install"}, timeout=30)
    assert not is_error and body["results"]  # still serving


@pytest.mark.parametrize(("tool", "arguments", "name", "expected"), [
    ("search_docs", {"query": ""}, "query", "a non-empty string"),
    ("search_docs", {"query": 123}, "query", "a non-empty string"),
    ("search_docs", {"query": "install", "tags": "linux"}, "tags", "a list of strings"),
    ("search_docs", {"query": "install", "tags": [1]}, "tags", "a list of strings"),
    ("read_section", {"file_path": ""}, "file_path", "a non-empty string"),
    ("get_links", {"file_path": ["install.md"]}, "file_path", "a non-empty string"),
])
def test_string_and_list_arguments_are_refused_in_one_sentence(guide_server: RawServer, tool: str, arguments: dict,
                                                                name: str, expected: str) -> None:
    """Regression (trial2): an empty query got pydantic's "query: String should have at least 1
    character" and a string for ``tags`` "Input should be a valid list", where a number out of
    range gets the argument, what it must be and what was sent."""
    is_error, body = guide_server.tool(tool, arguments, timeout=30)
    assert is_error, body
    message = body["error"]
    assert message.startswith(f"invalid arguments for {tool}: {name} must be {expected}"), message
    assert "(got " in message and "should" not in message and "\n" not in message
