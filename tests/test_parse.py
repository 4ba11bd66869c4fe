"""Parser: sections, breadcrumbs, line ranges, parts and passages on hand-written inputs."""

from __future__ import annotations

from markdown_memory.markdown import parse_document
from markdown_memory.markdown.parse import PREAMBLE, WHOLE_DOCUMENT


def paths(doc):
    return [(s.start_line, s.heading_path) for s in doc.sections]


def test_atx_and_setext_headings_build_breadcrumbs_with_source_lines():
    text = "# Guide\n\nIntro.\n\nInstall\n-------\n\nSteps.\n\n### Linux\n\nApt.\n"
    doc = parse_document(text)
    assert paths(doc) == [(1, "Guide"), (5, "Guide > Install"), (10, "Guide > Install > Linux")]
    linux = doc.sections[2]
    assert (linux.start_line, linux.end_line) == (10, 12)
    assert linux.text == "### Linux\n\nApt."


def test_skipped_levels_and_duplicates_get_unique_breadcrumbs():
    text = "# A\n\n#### Deep\n\nx\n\n## B\n\ny\n\n## B\n\nz\n"
    doc = parse_document(text)
    assert [s.heading_path for s in doc.sections] == ["A", "A > Deep", "A > B", "A > B [2]"]


def test_preamble_and_headingless_file():
    doc = parse_document("Some intro text.\n\n# Title\n\nBody.\n")
    assert doc.sections[0].heading_path == PREAMBLE
    assert (doc.sections[0].start_line, doc.sections[0].end_line) == (1, 1)
    single = parse_document("just a note\nwith two lines\n", "notes/todo.md")
    assert [s.heading_path for s in single.sections] == [WHOLE_DOCUMENT]
    assert single.title == "Todo"  # the file name as words (markdown/titles.py)


def test_crlf_and_bom_keep_line_numbers_and_titles_clean():
    text = "\ufeff# Title\r\n\r\n## Child\r\n\r\nBody line.\r\n"
    doc = parse_document(text)
    assert paths(doc) == [(1, "Title"), (3, "Title > Child")]
    assert all("\ufeff" not in s.heading_path and "\r" not in s.text for s in doc.sections)


def test_front_matter_is_metadata_and_leading_rule_is_not():
    fm = parse_document("---\ntitle: Deploy\ntags: [a]\n---\n\n# Deploy Guide\n\ntext\n")
    assert fm.metadata == {"title": "Deploy", "tags": ["a"]}
    assert paths(fm) == [(6, "Deploy Guide")]
    assert all("title:" not in p.text for p in fm.passages)
    rule = parse_document("---\n\nQuarterly sync notes.\n\n# Decisions\n\nShip it.\n\n---\n")
    assert rule.metadata == {}
    assert any("Quarterly sync" in p.text for p in rule.passages)


def test_headings_inside_fences_lists_and_quotes_are_not_sections():
    text = "# Top\n\n```bash\n# not a heading\n```\n\n> # quoted\n\n- # in list\n\n## Real\n\nx\n"
    doc = parse_document(text)
    assert [s.heading_path for s in doc.sections] == ["Top", "Top > Real"]
    texts = " | ".join(p.text for p in doc.passages)
    assert "# not a heading" in texts and "quoted" in texts and "in list" in texts


def test_unclosed_fence_is_closed_before_next_heading_with_warning():
    text = "# Notes\n\n## Install\n\n```bash\nrun setup\n\n## Configure\n\nrestart the daemon\n"
    doc = parse_document(text)
    assert [s.heading_path for s in doc.sections] == ["Notes", "Notes > Install", "Notes > Configure"]
    assert any("line 5" in w for w in doc.warnings)


def test_long_section_splits_into_parts_that_reassemble_byte_for_byte():
    paras = "\n\n".join(f"Paragraph {i} " + "word " * 120 for i in range(12))
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(40)) + "\n```"
    text = f"# Big\n\n{paras}\n\n{code}\n\nTail paragraph.\n"
    doc = parse_document(text)
    parts = [s for s in doc.sections if s.base_path == "Big"]
    assert len(parts) > 1
    assert [s.heading_path for s in parts] == [f"Big (Part {k})" for k in range(1, len(parts) + 1)]
    assert "\n".join(s.text for s in parts) == text.rstrip("\n")
    for s in parts:  # never cut inside the fence
        assert s.text.count("```") % 2 == 0


def test_passages_cover_paragraphs_list_items_rows_and_code():
    text = (
        "# T\n\nA paragraph.\n\n- item one\n  - nested detail\n- item two\n\n"
        "| Name | Value |\n| --- | --- |\n| retries | 5 |\n\n```\ncode here\n```\n"
    )
    doc = parse_document(text)
    kinds = [(p.kind, p.text) for p in doc.passages]
    assert ("paragraph", "A paragraph.") in kinds
    assert ("list_item", "item one\nnested detail") in kinds
    assert ("table_row", "Name: retries; Value: 5") in kinds
    assert ("code", "code here") in kinds


def test_long_passage_is_windowed_without_losing_words():
    words = [f"w{i}" for i in range(400)]
    text = "# T\n\n" + " ".join(words) + "\n"
    doc = parse_document(text)
    assert len(doc.passages) > 1
    assert all(len(p.text) <= 600 for p in doc.passages)
    assert " ".join(p.text for p in doc.passages).split() == words


def test_html_headings_start_sections_like_markdown_headings():
    text = (
        "## FAQ\n\n* [Config?](#config)\n\n"
        '<h3 name="config">\nDoes it support configuration files?\n</h3>\n\nYes, see the guide.\n\n'
        '<h3 name="order">How can I get results in order?</h3>\n\nUse --sort.\n\n'
        '<h1 align="center"><img src="logo.png"></h1>\n\nNot a heading: only an image.\n'
    )
    doc = parse_document(text)
    assert [(s.start_line, s.heading_path) for s in doc.sections] == [
        (1, "FAQ"),
        (5, "FAQ > Does it support configuration files?"),
        (11, "FAQ > How can I get results in order?"),
    ]
    assert any("Use --sort." in p.text for p in doc.passages if doc.sections[p.section].start_line == 11)


def test_heading_written_like_a_duplicate_suffix_keeps_its_own_address():
    """Regression (tester): ``## Same [2]`` written in the file shared ``T > Same [2]`` with
    the second of three generated duplicates (overlapping outline entries, one read returning
    both). Generated suffixes now skip numbers spelled by a heading, wherever it stands."""
    text = (
        "# T\n\n## Same\n\nalpha\n\n## Same\n\nbeta\n\n### Sub\n\nsub\n\n"
        "## Same\n\ngamma\n\n## Same [2]\n\ndelta\n\n### Sub\n\nliteral sub\n"
    )
    doc = parse_document(text)
    assert paths(doc) == [
        (1, "T"), (3, "T > Same"), (7, "T > Same [3]"), (11, "T > Same [3] > Sub"),
        (15, "T > Same [4]"), (19, "T > Same [2]"), (23, "T > Same [2] > Sub"),
    ]
    assert doc.sections[5].text == "## Same [2]\n\ndelta"
    # The literal heading before its look-alikes gets the same answer.
    early = parse_document("# T\n\n## Same [2]\n\ndelta\n\n## Same\n\nalpha\n\n## Same\n\nbeta\n")
    assert [s.heading_path for s in early.sections] == ["T", "T > Same [2]", "T > Same", "T > Same [3]"]


def test_duplicate_numbers_do_not_move_when_unrelated_headings_change():
    base = "# T\n\n## A\n\nx\n\n## A\n\ny\n\n## B\n\nz\n\n## B\n\nw\n"
    edited = base.replace("## B\n\nz", "## New\n\nn\n\n## B\n\nz").replace("# T\n\n", "# T\n\n## Other\n\no\n\n")
    before = {s.text: s.heading_path for s in parse_document(base).sections}
    after = {s.text: s.heading_path for s in parse_document(edited).sections}
    assert {t: after[t] for t in before} == before
    assert before["## A\n\ny"] == "T > A [2]" and before["## B\n\nw"] == "T > B [2]"


def test_generated_part_names_never_take_a_heading_written_that_way():
    """Regression (tester): a long ``# Big`` split into ``Big (Part n)`` and a literal
    ``# Big (Part 2)`` shared one address. The literal keeps it; the generated piece is
    ``Big (Part 2) [2]`` and still belongs to ``Big`` (its base_path)."""
    body = "\n\n".join(f"Paragraph {i} with several words to make the section long enough." for i in range(300))
    for text in (f"# Big\n\n{body}\n\n# Big (Part 2)\n\nliteral\n", f"# Big (Part 2)\n\nliteral\n\n# Big\n\n{body}\n"):
        doc = parse_document(text)
        addresses = [s.heading_path for s in doc.sections]
        assert len(addresses) == len(set(addresses))
        parts = [s for s in doc.sections if s.base_path == "Big"]
        assert len(parts) > 2
        assert [s.heading_path for s in parts[:3]] == ["Big (Part 1)", "Big (Part 2) [2]", "Big (Part 3)"]
        literal = [s for s in doc.sections if s.heading_path == "Big (Part 2)"]
        assert [(s.base_path, s.part, s.text) for s in literal] == [("Big (Part 2)", 0, "# Big (Part 2)\n\nliteral")]


def test_trailing_heading_attributes_are_not_part_of_the_breadcrumb():
    """Regression (tester): ``## Getting started {#getting-started}`` (Pandoc, Hugo, MkDocs)
    kept the attribute block in its breadcrumb. Only a trailing block opening with an id or a
    class goes; the section text stays verbatim."""
    text = (
        "# Guide {#top}\n\n## Getting started {#getting-started}\n\nx\n\n"
        "## Config {#cfg .wide key=val}\n\nx\n\n## Styled {.note}\n\nx\n\n## Listed {: #listed }\n\nx\n\n"
        "## Closed ## {#closed}\n\nx\n\nSetext {#setext}\n----------------\n\nx\n\n"
        "## GET /users/{id}\n\nx\n\n## Set {x}\n\nx\n\n## Code `{#x}`\n\nx\n\n## {#only}\n\nx\n"
    )
    doc = parse_document(text)
    assert doc.title == "Guide"
    assert [s.heading_path for s in doc.sections] == [
        "Guide", "Guide > Getting started", "Guide > Config", "Guide > Styled", "Guide > Listed",
        "Guide > Closed", "Guide > Setext", "Guide > GET /users/{id}", "Guide > Set {x}",
        "Guide > Code {#x}", "Guide > {#only}",  # a code span is its text (issue 13)
    ]
    assert doc.sections[1].title == "Getting started"
    assert doc.sections[1].text == "## Getting started {#getting-started}\n\nx"

