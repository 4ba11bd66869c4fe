"""Real-world Markdown parsing cases (issue 6), each through the Engine: outline, read,
search and the index report. Inputs are copies of ../shared/cases/<id>/ in
tests/fixtures/cases/<id>/ (written for this project); each test names its case id.

Search checks use the real MiniLM model (hybrid mode, the default a user gets); one case
module builds one engine per case folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages, stored_texts

CASES = Path(__file__).parent / "fixtures" / "cases"


@pytest.fixture
def case_engine(tmp_path, make_engine):
    """``case_engine(case_id, *files, embedder="minilm")`` -> (engine, report): the case's
    input files copied into a fresh docs root and indexed."""

    def build(case_id: str, *files: str, embedder: str = "minilm"):
        src = CASES / case_id
        root = tmp_path / case_id
        root.mkdir()
        for name in files:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / name, root / name)
        engine = make_engine(root, embedder=embedder)
        report = engine.index()
        assert not report.failed, report.failed
        return engine, report

    return build


def outline_lines(engine, path: str) -> list[tuple[int, str]]:
    return [(h.start_line, h.heading_path) for h in engine.outline(path).headings]


def first_hit(engine, query: str) -> tuple[str, str]:
    results = engine.search(SearchRequest(query)).results
    assert results, f"no result for {query!r}"
    return results[0].file_path, results[0].heading_path


def passages(engine, path: str) -> list[tuple[str, str, int, int, str]]:
    """(section heading_path, kind, start_line, end_line, text) of every stored passage."""
    return [(p.heading_path, p.kind, p.start_line, p.end_line, p.text) for p in stored_passages(engine.store, path)]


def passage_with(engine, path: str, needle: str) -> tuple[str, str, int, int, str]:
    found = [p for p in passages(engine, path) if needle in p[4]]
    assert len(found) == 1, f"{needle!r} in {len(found)} passages: {found}"
    return found[0]


# -- 001 setext heading from an HTML converter ---------------------------------------------
# Source: https://github.com/xberg-io/html-to-markdown/issues/124 (and markdig#436, Engram#1616)
SETEXT_TITLE = "Version 2.4 adds the export command and a dry-run switch for it."


def test_case_001_setext_heading_joins_soft_break_and_rules_are_not_sections(case_engine):
    engine, _ = case_engine("001-setext-from-converter", "input.md")
    assert outline_lines(engine, "input.md") == [
        (1, "Release Notes"),
        (5, f"Release Notes > {SETEXT_TITLE}"),
        (16, "Release Notes > Known Issues"),
    ]
    titles = [h.title for h in engine.outline("input.md").headings]
    assert SETEXT_TITLE in titles
    assert not any("\n" in t or "\r" in t or "commandand" in t for t in titles)
    section, kind, *_ = passage_with(engine, "input.md", "Version 2.3 fixed the login timeout.")
    assert section == f"Release Notes > {SETEXT_TITLE}" and kind != "heading"
    assert not any(p[4].strip() in ("---", "***") for p in passages(engine, "input.md"))
    assert first_hit(engine, "FAT32") == ("input.md", "Release Notes > Known Issues")


# -- 002 a leading --- rule is not front matter --------------------------------------------
# Source: https://github.com/jgravelle/jdocmunch-mcp/issues/56 (and markdown-to-jsx#861, gbrain#4543)
def test_case_002_leading_rule_keeps_headings_and_text(case_engine):
    engine, report = case_engine(
        "002-leading-rule-not-frontmatter", "input-rule.md", "input-frontmatter.md", "input-rule-unclosed.md"
    )
    assert outline_lines(engine, "input-rule.md") == [(7, "Decisions"), (13, "Action Items")]
    assert first_hit(engine, "nightly build") == ("input-rule.md", "Decisions")
    assert passage_with(engine, "input-rule.md", "Quarterly sync")  # document text, not metadata
    assert engine.outline("input-rule.md").front_matter_keys == ()

    assert outline_lines(engine, "input-frontmatter.md") == [(6, "Deploy Guide"), (10, "Deploy Guide > Rollback")]
    assert not any("title:" in p[4] or "tags:" in p[4] for p in passages(engine, "input-frontmatter.md"))
    meta = engine.store.document_header("input-frontmatter.md").metadata
    assert (meta["title"], meta["tags"]) == ("Deploy Guide", ["ops", "deploy"])

    assert outline_lines(engine, "input-rule-unclosed.md") == [(4, "Migration Plan")]
    section, kind, *_ = passage_with(engine, "input-rule-unclosed.md", "Status: draft, see the planning board for owners.")
    assert kind == "paragraph"
    assert not [w for w in report.warnings if w["path"] == "input-rule-unclosed.md"]


# -- 003 UTF-8 BOM ---------------------------------------------------------------------------
# Source: https://github.com/jgravelle/jdocmunch-mcp/issues/53 (and cmark#334, mdhero#122)
def test_case_003_bom_does_not_hide_first_heading_or_front_matter(case_engine, tmp_path):
    files = ("bom-atx.md", "bom-frontmatter.md", "bom-setext.md")
    for name in files:
        assert (CASES / "003-utf8-bom" / name).read_bytes().startswith(b"\xef\xbb\xbf")
    engine, _ = case_engine("003-utf8-bom", *files)
    assert outline_lines(engine, "bom-atx.md") == [
        (1, "Install Guide"), (5, "Install Guide > Linux"), (9, "Install Guide > Windows")
    ]
    assert outline_lines(engine, "bom-frontmatter.md") == [(6, "Backup Policy")]
    assert engine.outline("bom-frontmatter.md").front_matter_keys == ("owner", "title")
    assert outline_lines(engine, "bom-setext.md") == [(1, "Style Guide"), (6, "Style Guide > Code Samples")]
    for column, texts in stored_texts(engine.store).items():
        assert not [t for t in texts if "\ufeff" in t], column
    assert first_hit(engine, "Style")[0] == "bom-setext.md"
    assert first_hit(engine, "Install")[0] == "bom-atx.md"


def test_case_003_bom_in_the_middle_of_concatenated_files(make_engine, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "joined.md").write_bytes(b"\xef\xbb\xbf# One\n\ntext one\n\xef\xbb\xbf# Two\n\ntext two\n")
    engine = make_engine(root, embedder="none")
    engine.index()
    assert outline_lines(engine, "joined.md") == [(1, "One"), (4, "Two")]


# -- 005 # lines inside code ---------------------------------------------------------------
# Source: https://github.com/VeraTools/vera/issues/159 (and agno#10470, Engram#1616, langroid#1042, doctoc#4)
def test_case_005_hash_lines_in_code_are_not_headings(case_engine):
    engine, _ = case_engine("005-hash-lines-in-code", "input.md")
    assert outline_lines(engine, "input.md") == [(1, "Build Guide"), (11, "Build Guide > Configure"), (46, "Build Guide > Test")]
    code = [p for p in passages(engine, "input.md") if p[1] == "code"]
    assert len(code) == 6
    make = passage_with(engine, "input.md", "# backtick fence that contains a tilde line")
    assert "~~~" in make[4] and "# still inside the make fence" in make[4]
    md = passage_with(engine, "input.md", "# Not a Header")
    assert "## Also Not A Header" in md[4]
    assert passage_with(engine, "input.md", "# install build dependencies")[0] == "Build Guide"
    for needle in ("cache_dir", "# tilde fence comment", "# Not a Header", "~~~", "# indented code block comment"):
        assert passage_with(engine, "input.md", needle)[0] == "Build Guide > Configure"
    assert first_hit(engine, "cache_dir") == ("input.md", "Build Guide > Configure")
    assert first_hit(engine, "make check") == ("input.md", "Build Guide > Test")


# -- 007 unclosed code fence -----------------------------------------------------------------
# Source: https://github.com/jgravelle/jdocmunch-mcp/issues/51 (and book-to-skill#135, outl#214, Gnome-MD#11)
def test_case_007_unclosed_fence_is_repaired_and_reported(case_engine):
    engine, report = case_engine("007-unclosed-fence", "unclosed.md", "nested-outer-fence.md")
    assert outline_lines(engine, "unclosed.md") == [
        (1, "Setup Notes"), (3, "Setup Notes > Install"), (9, "Setup Notes > Configure")
    ]
    assert first_hit(engine, "setup-token-7f3a") == ("unclosed.md", "Setup Notes > Install")
    assert first_hit(engine, "restart the daemon") == ("unclosed.md", "Setup Notes > Configure")
    assert outline_lines(engine, "nested-outer-fence.md") == [
        (1, "Query Language"), (10, "Query Language > Relationship to Tags"), (15, "Query Language > Architecture")
    ]
    assert first_hit(engine, "compiles queries to SQL") == ("nested-outer-fence.md", "Query Language > Architecture")
    warned = {(w["path"], w["message"]) for w in report.warnings}
    assert any(p == "unclosed.md" and "line 5" in m and "fence" in m for p, m in warned), warned
    assert any(p == "nested-outer-fence.md" and "line 13" in m and "fence" in m for p, m in warned), warned
    assert report.added == 2 and not report.failed


def test_case_007_unclosed_fence_warning_in_cli_summary(tmp_path, cli_main):
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copyfile(CASES / "007-unclosed-fence" / "unclosed.md", root / "unclosed.md")
    out = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "index", str(root))
    assert out.returncode == 0, out.stderr
    assert "unclosed.md" in out.stdout and "line 5" in out.stdout


# -- 008 HTML blocks ---------------------------------------------------------------------------
# Source: https://github.com/jgravelle/jdocmunch-mcp/issues/45 (and nextcloud/collectives#2180)
def test_case_008_headings_inside_html_blocks_are_not_sections(case_engine):
    engine, _ = case_engine("008-html-blocks", "input.md")
    assert outline_lines(engine, "input.md") == [
        (1, "Operations Handbook"), (22, "Operations Handbook > Legacy Restore"), (28, "Operations Handbook > Daily Checks")
    ]
    for hit in engine.search(SearchRequest("Disaster Recovery")).results:
        assert "Disaster" not in hit.heading_path
    assert first_hit(engine, "schema migrations on Fridays") == ("input.md", "Operations Handbook")
    assert passage_with(engine, "input.md", "schema migrations on Fridays")[0] == "Operations Handbook"
    assert first_hit(engine, "vault catalog") == ("input.md", "Operations Handbook > Legacy Restore")


# -- 009 MDX -------------------------------------------------------------------------------------
# Source: https://github.com/jgravelle/jdocmunch-mcp/issues/46 (and superdav-ai-agent#2180, readmeio/markdown#1541)
def test_case_009_mdx_keeps_code_and_prose_drops_esm(case_engine):
    path = "docs/quickstart.mdx"
    engine, report = case_engine("009-mdx-esm-and-prose", path)
    assert report.added == 1 and not report.warnings
    outline = engine.outline(path)
    assert [(h.start_line, h.heading_path) for h in outline.headings] == [
        (9, "Quickstart"), (26, "Quickstart > Exporting Results")
    ]
    assert outline.preamble is None  # import/export lines alone are not a section
    source = (CASES / "009-mdx-esm-and-prose" / path).read_text().split("\n")
    code = passage_with(engine, path, "@example/sdk")
    assert code[0] == "Quickstart" and code[1] == "code"
    assert code[4] == "\n".join(source[16:20])  # byte-identical fence body (lines 17-20)
    assert first_hit(engine, "@example/sdk") == (path, "Quickstart")
    assert passage_with(engine, path, "Import the sample dataset")[0] == "Quickstart"
    assert first_hit(engine, "Import the sample dataset") == (path, "Quickstart")
    two_lines = passage_with(engine, path, "export them from the CLI")
    assert two_lines[0] == "Quickstart > Exporting Results" and two_lines[4].startswith("Bundles can be downloaded")
    for query in ("Export your settings", "export them from the CLI", "limited to 10,000 rows"):
        assert first_hit(engine, query) == (path, "Quickstart > Exporting Results")
    texts = [p[4] for p in passages(engine, path)]
    assert not any("@site/components/Tabs" in t or "apiVersion" in t or "sidebar_position" in t for t in texts)
    assert not any(t.strip() in ("<Tabs>", "</Tabs>", "</Tab>") for t in texts)


# -- 011 headings inside containers ------------------------------------------------------------
# Source: https://github.com/Vinzent03/obsidian-advanced-uri/issues/124 (and siyuan#9774, typora#4153, obsidian-outliner#18)
def test_case_011_nested_headings_are_passages_not_sections(case_engine):
    engine, _ = case_engine("011-headings-inside-containers", "input.md")
    assert outline_lines(engine, "input.md") == [(1, "Incident Review"), (14, "Incident Review > Timeline")]
    for needle in ("Heading Inside Callout", "reconstructed from chat logs", "first responder"):
        assert passage_with(engine, "input.md", needle)[0] == "Incident Review"
        assert first_hit(engine, needle) == ("input.md", "Incident Review")
    assert first_hit(engine, "09:24") == ("input.md", "Incident Review > Timeline")
    link = passage_with(engine, "input.md", "rollback steps")
    assert (link[2], link[3]) == (12, 12) and "Deploy Guide" in link[4]


# -- 013 duplicate and empty headings ---------------------------------------------------------
# Source: https://github.com/vercel-labs/lat.md/pull/167 (and treemd#55, tinkerdown#149, mdr#65, Engram#1616)
def test_case_013_duplicate_empty_and_heading_only_sections(case_engine):
    engine, report = case_engine("013-duplicate-and-empty-headings", "input.md")
    got = outline_lines(engine, "input.md")
    assert [line for line, _ in got] == [1, 3, 5, 9, 11, 15, 19, 23, 27, 28, 29]
    paths = [p for _, p in got]
    assert paths[:7] + paths[8:] == [
        "Services", "Services > Billing", "Services > Billing > Setup", "Services > Search",
        "Services > Search > Setup", "Services > Tasks", "Services > TASKS",
        "Appendix", "Appendix > Glossary", "Appendix > Glossary > Deep Term",
    ]
    assert paths[7].startswith("Services > ") and paths[7] not in paths[:7]
    assert len(set(paths)) == 11
    search_setup = engine.read("input.md", "Services > Search > Setup").content
    assert "search index" in search_setup and "billing database" not in search_setup
    tasks = engine.read("input.md", "Services > Tasks").content
    assert "Weekly tasks" in tasks and "Archived" not in tasks
    assert "Archived" in engine.read("input.md", "Services > TASKS").content
    untitled = engine.read("input.md", paths[7])
    assert untitled.start_line == 23 and "This paragraph sits under an empty heading." in untitled.content
    assert passage_with(engine, "input.md", "sits under an empty heading")[0] == paths[7]
    all_passages = passages(engine, "input.md")
    assert all(p[4].strip() for p in all_passages)
    assert not [p for p in all_passages if p[0] in ("Appendix", "Appendix > Glossary")]
    vectors = sum(p.has_vector for p in stored_passages(engine.store)
                  if p.heading_path in ("Appendix", "Appendix > Glossary"))
    assert vectors == 0
    # re-indexing from scratch hits no uniqueness constraint
    assert engine.index(force=True).updated == 1


# -- 014 table rows --------------------------------------------------------------------------
# Source: https://github.com/DavidAnson/markdownlint/issues/1206 (and marked#1257, anydoc#110, hwaro#638)
def test_case_014_table_rows_lose_no_text(case_engine):
    engine, _ = case_engine("014-table-pipes-and-extra-cells", "input.md")
    assert outline_lines(engine, "input.md") == [(1, "Shell Cheatsheet"), (10, "Shell Cheatsheet > After the Table")]
    rows = {p[2]: p for p in passages(engine, "input.md") if p[1] == "table_row"}
    assert sorted(rows) == [5, 6, 7, 8]
    assert all(r[0] == "Shell Cheatsheet" for r in rows.values())
    expectations = {5: ["sort -nr", "du -k \\| sort -nr \\| head"], 6: ["make lint || make fmt", "unescaped pipes split this cell"],
                    7: ["extra fourth cell"], 8: ["nothing here"]}
    for line, needles in expectations.items():
        for needle in needles:
            assert needle in rows[line][4], (needle, rows[line])
    for word in ("Task", "Command", "Notes"):
        assert all(word in r[4] for r in (rows[5], rows[6]))
    for query in ("sort -nr", "make fmt", "unescaped pipes split this cell", "extra fourth cell", "nothing here"):
        assert first_hit(engine, query) == ("input.md", "Shell Cheatsheet")
    assert first_hit(engine, "first blank line") == ("input.md", "Shell Cheatsheet > After the Table")


# -- 023 invalid YAML front matter -------------------------------------------------------------
# Source: https://github.com/garrytan/gbrain/issues/4543 (and basic-memory#368, markdown-vault-mcp#955, memry#853)
FM_FILES = {
    "backtick-path.md": (6, "Agent Setup", "backtickpathtoken"),
    "star-title.md": (5, "Release Plan", "aliastoken"),
    "wikilink-list.md": (8, "Link Hub", "flowtoken"),
    "unquoted-colon.md": (6, "Meeting", "colontoken"),
    "tab-indent.md": (7, "Tabs", "tabtoken"),
    "valid.md": (6, "Valid Note", "validtoken"),
}


def test_case_023_invalid_front_matter_is_reported_and_body_indexed(case_engine):
    files = [f"notes/{name}" for name in FM_FILES]
    before = {f: (CASES / "023-invalid-frontmatter-yaml" / f).read_bytes() for f in files}
    engine, report = case_engine("023-invalid-frontmatter-yaml", *files)
    assert report.added == 6
    for name, (line, title, token) in FM_FILES.items():
        path = f"notes/{name}"
        assert outline_lines(engine, path) == [(line, title)]
        assert engine.outline(path).preamble is None
        assert first_hit(engine, token)[0] == path
        for p in passages(engine, path):
            assert not any(key in p[4] for key in ("title:", "source:", "related:", "summary:", "---"))
    warned = sorted((w["path"], w["message"]) for w in report.warnings)
    assert [p for p, _ in warned] == sorted(f"notes/{n}" for n in FM_FILES if n != "valid.md")
    assert all("front matter" in m and "line" in m for _, m in warned)
    meta = engine.store.document_header("notes/valid.md").metadata
    assert (meta["title"], meta["tags"]) == ("Valid Note", ["ops", "release"])
    again = engine.index()
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 6)
    assert sorted((w["path"], w["message"]) for w in again.warnings) == warned
    root = Path(engine.root)
    assert all((root / f).read_bytes() == before[f] for f in files)
