"""Every MCP tool answer fits the client's tool-output limit (issue 37, case 055), with a
pointer to the rest: a table over the tools, each asked what makes it largest (a 5,251-heading
outline, a page of documents with long titles, a hub page's links, a huge section, a search
with the largest budget), checked in bytes of the JSON the client receives; paged answers are
followed to the end and give every item once. Case 055 runs through the CLI and MCP."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from markdown_memory.config import Settings
from markdown_memory.limits import MAX_ANSWER_BYTES, MAX_MAX_TOKENS, MAX_TOP_K
from markdown_memory.mcp.fit import answer_bytes, fit_answer
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

CASE = Path(__file__).parent / "fixtures" / "cases" / "055-mcp-outline-huge-file"
MANY = 260
LONG = "configuration reference entry describing the deployment option in full detail " * 6


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    base = tmp_path_factory.mktemp("answers")
    root = base / "docs"
    root.mkdir()
    shutil.copy(CASE / "small.md", root / "small.md")
    subprocess.run([sys.executable, str(CASE / "gen_big.py")], cwd=root, check=True, capture_output=True)
    (root / "many").mkdir()
    for k in range(MANY):
        (root / "many" / f"doc-{k:04d}.md").write_text(
            f"# {LONG} {k}\n\nSharedword text of page {k}. {LONG * 2}\n\nBack to [the hub](../hub.md).\n", encoding="utf-8")
    links = "\n".join(f"- [{LONG} {k}](many/doc-{k:04d}.md)" for k in range(MANY))
    (root / "hub.md").write_text(f"# Hub\n\n## {LONG * 3}\n\n{links}\n", encoding="utf-8")
    (root / "huge.md").write_text("# Huge\n\n## One section\n\n" + "\n\n".join(
        f"Paragraph {k} of the huge section, {LONG}" for k in range(2_000)) + "\n", encoding="utf-8")
    rt = Runtime(Settings.load(root, base / "mcp.db", "none", auto_index=False))
    call(rt, "index_directory", lambda: rt.index_directory(None, False))
    yield rt
    rt.shutdown()


def call(rt: Runtime, tool: str, fn) -> dict:
    result = anyio.run(rt.call, tool, fn)
    text = result.content[0].text
    assert len(text.encode("utf-8")) <= MAX_ANSWER_BYTES, (tool, len(text))
    assert not result.is_error, text[:500]
    return json.loads(text)  # type: ignore[no-any-return]


#: tool -> (the answer as the engine makes it, the same through MCP)
TOOLS = {
    "get_document_outline": lambda rt: rt.outline("big.md", None),
    "list_documents": lambda rt: rt.list_documents(None, 0),
    "get_links": lambda rt: rt.get_links("hub.md", 0),
    "read_section": lambda rt: rt.read_section("huge.md", "Huge > One section", False, None),
    "search_docs": lambda rt: rt.search_docs(SearchRequest("sharedword", top_k=MAX_TOP_K, max_tokens=MAX_MAX_TOKENS)),
}
#: where each answer points to the rest
POINTER = {"get_document_outline": "truncated", "list_documents": "next_offset", "get_links": "next_offset",
           "read_section": "next_cursor", "search_docs": "truncated"}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_answer_fits_and_points_to_the_rest(runtime, tool):
    answer = call(runtime, tool, lambda: TOOLS[tool](runtime))
    if tool == "search_docs" and "truncated" not in answer:  # hits past the budget are pointers
        assert any(hit.get("content") is None for hit in answer["results"])
        return
    assert answer.get(POINTER[tool]) is not None, (tool, {k: v for k, v in answer.items() if not isinstance(v, list)})
    if "truncated" in answer:
        cut = answer["truncated"]
        assert cut["omitted"] > 0 and cut["field"] in answer and cut["note"]


def test_the_outline_keeps_the_chapters_and_says_what_it_left_out(runtime):
    full = runtime.outline("big.md", None)
    assert answer_bytes(full) > MAX_ANSWER_BYTES  # the test's input is one the cap must act on
    answer = call(runtime, "get_document_outline", lambda: runtime.outline("big.md", None))
    assert len(answer["headings"]) == 251 and answer["truncated"]["max_depth"] == 2
    assert answer["truncated"]["omitted"] == 5_000 and "max_depth=2" in answer["truncated"]["note"]
    small = call(runtime, "get_document_outline", lambda: runtime.outline("small.md", None))
    assert [h["heading_path"] for h in small["headings"]] == ["Small", "Small > Only section"] and "truncated" not in small


@pytest.mark.parametrize(("tool", "fields"), [("list_documents", ("documents",)),
                                              ("get_links", ("outgoing", "backlinks"))])
def test_a_cut_page_continues_where_it_stopped(runtime, tool, fields):
    page = (lambda o: runtime.list_documents(None, o)) if tool == "list_documents" else (
        lambda o: runtime.get_links("hub.md", o))
    assert answer_bytes(page(0)) > MAX_ANSWER_BYTES
    seen: dict[str, list[str]] = {f: [] for f in fields}
    offset: int | None = 0
    cut = False
    while offset is not None:
        answer = call(runtime, tool, lambda o=offset: page(o))
        cut = cut or "truncated" in answer
        for f in fields:
            seen[f] += [item.get("path") or item.get("file_path") or item.get("raw") for item in answer[f]]
        offset = answer["next_offset"]
    assert cut
    for f in fields:
        assert len(seen[f]) == len(set(seen[f])), f"{f} repeats an item"
    if tool == "list_documents":
        assert len(seen["documents"]) == MANY + 4
    else:
        assert len(seen["outgoing"]) == MANY and len(seen["backlinks"]) == MANY


#: answers of the tools the fixture cannot make large (drift, index runs): the rule is the same
SYNTHETIC = {
    "find_drift": {"sections": [{"file_path": f"d{k}.md", "heading_path": LONG, "names": ["--x"]} for k in range(400)],
                   "message": None},
    "index_directory": {"added": 1, "failed": [{"path": f"f{k}.md", "message": LONG} for k in range(400)], "warnings": []},
    "long text": {"content": "界" * 60_000, "next_cursor": None},
}


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_any_answer_is_cut_to_the_cap_with_a_note(name):
    data = SYNTHETIC[name]
    out = fit_answer(data)
    assert answer_bytes(out) <= MAX_ANSWER_BYTES < answer_bytes(data)
    assert out["truncated"]["omitted"] > 0 and out["truncated"]["note"]


def test_an_answer_under_the_cap_is_unchanged():
    data = {"headings": [{"heading_path": "A > B"}], "x": "y" * 100}
    assert fit_answer(data) is data


def test_case_055_cli_outline_max_depth(tmp_path, cli_main):
    root = tmp_path / "docs"
    root.mkdir()
    subprocess.run([sys.executable, str(CASE / "gen_big.py")], cwd=root, check=True, capture_output=True)
    assert cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "index", str(root)).returncode == 0
    out = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "outline", "big.md", "--max-depth", "2",
                   "--json", "--docs-dir", str(root))
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["headings"]) == 251
