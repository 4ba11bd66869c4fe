"""Real-world cases of issue 13 about headings and parser limits, through the Engine, the CLI
and the MCP tool bodies: 012 (heading titles are the plain text a reader sees) and 015 (text
nested past markdown-it's nesting limit is never dropped). Inputs are copies of
../shared/cases/<id>/ in tests/fixtures/cases/<id>/.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from markdown_memory.config import Settings
from markdown_memory.markdown.parse import parse_document, split_lines
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages

CASES = Path(__file__).parent / "fixtures" / "cases"
C012 = "012-headings-with-inline-markup"
C015 = "015-deep-nesting-limit"


def copy_case(case_id: str, dest: Path, *files: str) -> Path:
    root = dest / case_id
    root.mkdir()
    for name in files:
        shutil.copyfile(CASES / case_id / name, root / name)
    return root


@pytest.fixture(scope="module")
def engine_012(tmp_path_factory, minilm):
    from markdown_memory.engine import Engine

    base = tmp_path_factory.mktemp("c012")
    root = copy_case(C012, base, "input.md")
    engine = Engine(Settings.load(root, base / "index.db", "minilm"), embedder=minilm)
    report = engine.index()
    assert not report.failed, report.failed
    yield engine
    engine.close()


def mcp_call(runtime: Runtime, tool: str, fn) -> tuple[bool, dict]:
    result = anyio.run(runtime.call, tool, fn)
    return bool(result.is_error), json.loads(result.content[0].text)


# -- 012 headings made of links, code spans, emphasis, images, escapes ----------------------
# Sources: vercel-labs/lat.md#167, docling-project/docling-core#769, dhis2/capture-app#4711
OUTLINE_012 = [
    (1, "CLI Reference"),
    (3, "Release notes"),
    (7, "--no-cache"),
    (11, "--no-color"),
    (15, "Create new tracked entity"),
    (19, "Create new tracked entity"),
    (23, "logo Branding"),
    (27, "Status: 200 OK vs 204 No Content"),
    (31, "Escaped *stars* & entities"),
]


def test_case_012_outline_titles_are_the_plain_text_of_the_heading(engine_012):
    headings = engine_012.outline("input.md").headings
    assert [(h.start_line, h.title) for h in headings] == OUTLINE_012
    paths = [h.heading_path for h in headings]
    assert paths[1:4] == ["CLI Reference > Release notes", "CLI Reference > --no-cache",
                          "CLI Reference > --no-color"]
    assert paths[4] == "CLI Reference > Create new tracked entity"
    assert paths[5] == "CLI Reference > Create new tracked entity [2]"  # still unique per document
    assert len(set(paths)) == len(paths) and all(h.title for h in headings)


def test_case_012_read_by_the_plain_breadcrumb_and_by_the_raw_markdown(engine_012):
    read = engine_012.read
    assert "registration page" in read("input.md", "CLI Reference > Create new tracked entity").content
    assert "bulk import" in read("input.md", "CLI Reference > Create new tracked entity [2]").content
    assert "website" in read("input.md", "CLI Reference > Release notes").content
    assert "backslash escape" in read("input.md", "CLI Reference > Escaped *stars* & entities").content
    # An agent that copies the heading from the file's source still lands on that section.
    assert "website" in read("input.md", "CLI Reference > [Release](https://example.com/releases) notes").content
    assert "download cache" in read("input.md", "CLI Reference > `--no-cache`").content
    assert "backslash escape" in read("input.md", r"CLI Reference > Escaped \*stars\* &amp; entities").content
    assert "assets folder" in read("input.md", "![logo](logo.png) Branding").content


def test_case_012_no_heading_text_becomes_a_body_passage(engine_012):
    texts = {p.text.strip() for p in stored_passages(engine_012.store, "input.md")}
    assert not texts & {"--no-cache", "`--no-cache`", "--no-color", "Release notes", "logo Branding"}


def test_case_012_search_for_the_code_span_finds_its_own_section(engine_012):
    hit = engine_012.search(SearchRequest("--no-cache")).results[0]
    assert hit.heading_path == "CLI Reference > --no-cache"


def test_case_012_cli_read_and_outline_use_the_plain_titles(tmp_path, cli_main):
    root = copy_case(C012, tmp_path, "input.md")
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "cli.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    assert cli_main("index", str(root), env=env).returncode == 0
    out = cli_main("outline", "input.md", "--docs-dir", str(root), "--json", env=env)
    assert out.returncode == 0, out.stderr
    titles = [h["title"] for h in json.loads(out.stdout)["headings"]]
    assert titles == [t for _, t in OUTLINE_012]
    for breadcrumb, needle in (("CLI Reference > logo Branding", "assets folder"),
                               ("CLI Reference > `--no-color`", "ANSI colours")):
        got = cli_main("read", "input.md", breadcrumb, "--docs-dir", str(root), "--json", env=env)
        assert got.returncode == 0, got.stderr
        assert needle in json.loads(got.stdout)["content"]


def test_case_012_mcp_outline_and_read_section(tmp_path):
    root = copy_case(C012, tmp_path, "input.md")
    runtime = Runtime(Settings.load(root, tmp_path / "mcp.db", "none", auto_index=False))
    try:
        is_error, _ = mcp_call(runtime, "index_directory", lambda: runtime.index_directory(None, False))
        assert not is_error
        is_error, outline = mcp_call(runtime, "get_document_outline", lambda: runtime.answer("get_document_outline", {"file_path": "input.md", "max_depth": None}))
        assert not is_error, outline
        crumbs = [h["heading_path"] for h in outline["headings"]]
        assert "CLI Reference > Status: 200 OK vs 204 No Content" in crumbs
        for crumb in crumbs:
            is_error, section = mcp_call(runtime, "read_section",
                                         lambda c=crumb: runtime.answer("read_section", {"file_path": "input.md", "heading_path": c, "include_subsections": False, "cursor": None}))
            assert not is_error, (crumb, section)
        is_error, section = mcp_call(runtime, "read_section", lambda: runtime.answer("read_section", {"file_path": "input.md", "heading_path": "CLI Reference > Create new **tracked entity**", "include_subsections": False, "cursor": None}))
        assert not is_error and "registration page" in section["content"]
    finally:
        runtime.shutdown()


# -- 015 lists / block quotes nested past markdown-it's maxNesting -------------------------
# Sources: markdown-it/markdown-it#1025, hukkin/mdformat#584, gollum#230, QOwnNotes#473


def assert_every_line_in_one_section(text: str) -> None:
    doc = parse_document(text, "doc.md")
    for i, line in enumerate(split_lines(text), start=1):
        if line.strip():
            owners = [s for s in doc.sections if s.start_line <= i <= s.end_line]
            assert len(owners) == 1, (i, line, len(owners))


@pytest.fixture(scope="module")
def engine_015(tmp_path_factory, minilm):
    from markdown_memory.engine import Engine

    base = tmp_path_factory.mktemp("c015")
    root = copy_case(C015, base, "nested-list.md", "deep-quotes.md")
    engine = Engine(Settings.load(root, base / "index.db", "minilm"), embedder=minilm)
    report = engine.index()
    assert not report.failed, report.failed
    yield engine
    engine.close()


def test_case_015_deep_list_keeps_the_next_heading_and_its_text(engine_015):
    headings = engine_015.outline("nested-list.md").headings
    assert [(h.start_line, h.heading_path) for h in headings] == [
        (1, "Dependency Tree"), (18, "Dependency Tree > After The Tree")]
    hit = engine_015.search(SearchRequest("crypto-core v1.11.0")).results[0]
    assert (hit.file_path, hit.heading_path) == ("nested-list.md", "Dependency Tree")
    hit = engine_015.search(SearchRequest("security update")).results[0]
    assert (hit.file_path, hit.heading_path) == ("nested-list.md", "Dependency Tree > After The Tree")
    assert_every_line_in_one_section((CASES / C015 / "nested-list.md").read_text(encoding="utf-8"))


def test_case_015_deep_quotes_keep_every_reply(engine_015):
    headings = engine_015.outline("deep-quotes.md").headings
    assert [(h.start_line, h.heading_path) for h in headings] == [
        (1, "Support Thread"), (50, "Support Thread > Resolution")]
    hits = engine_015.search(SearchRequest("reply level 22", path_prefix="deep-quotes.md")).results
    assert hits and hits[0].heading_path == "Support Thread"
    assert "reply level 22" in (hits[0].content or "")
    assert_every_line_in_one_section((CASES / C015 / "deep-quotes.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", ["list", "quote", "mixed"])
def test_case_015_nesting_past_the_raised_limit_is_indexed_as_plain_text_with_a_warning(kind):
    depth = 400
    if kind == "list":
        body = ["  " * i + f"- pkg{i}" for i in range(depth)]
    elif kind == "quote":
        body = [">" * (i + 1) + f" reply{i}" for i in range(depth)]
    else:
        body = ["> " * (i // 2) + "  " * (i % 2) + f"- pkg{i}" for i in range(depth)]
    text = "\n".join(["# Tree", "", *body, "", "## After", "", "closing words"])
    doc = parse_document(text, "deep.md")
    assert [(s.heading_path, s.start_line) for s in doc.sections if s.part <= 1][-1] == ("Tree > After", depth + 4)
    words = " ".join(p.text for p in doc.passages).split()
    assert all(f"pkg{i}" in words or f"reply{i}" in words for i in range(depth))
    assert "closing" in words
    assert any("indexed as plain text" in w for w in doc.warnings), doc.warnings
    assert_every_line_in_one_section(text)


@pytest.mark.parametrize(("kind", "depth", "cut"), [("list", 49, False), ("list", 50, True),
                                                     ("quote", 99, False), ("quote", 100, True)])
def test_case_015_nesting_limit_boundary(kind, depth, cut):
    if kind == "list":
        body = ["  " * i + f"- w{i}" for i in range(depth)]
    else:
        body = [">" * (i + 1) + f" w{i}" for i in range(depth)]
    doc = parse_document("\n".join(["# T", "", *body, "", "## Next", "", "end"]), "deep.md")
    assert [s.base_path for s in doc.sections][-1] == "T > Next"  # long quotes split in (Part n)
    assert {s.base_path for s in doc.sections} == {"T", "T > Next"}
    words = " ".join(p.text for p in doc.passages).split()
    assert all(f"w{i}" in words for i in range(depth))
    assert bool(doc.warnings) is cut, doc.warnings
    if cut:
        assert doc.warnings == [f"line {depth + 2} nest more than 49 lists or 99 block quotes deep; indexed as plain text"]


def test_case_015_warning_reaches_the_index_report(tmp_path, make_engine):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "deep.md").write_text("# T\n\n" + "\n".join(">" * (i + 1) + " r" for i in range(250)) + "\n",
                                  encoding="utf-8")
    report = make_engine(root, embedder="none").index()
    assert not report.failed
    assert "indexed as plain text" in json.dumps(report.to_dict())
