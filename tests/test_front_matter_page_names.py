"""A docs site's front matter names and addresses its page: a page without H1 is shown under its
front-matter title (Docusaurus, MkDocs Material and Hugo themes render it as the heading), so
its opening section is addressed and shown by that title, not "(preamble)"; the page's site id,
slug, permalink or url and its sidebar/link titles are found by a keyword search, which answers
with the page's opening section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markdown_memory.markdown import parse_document

#: (dialect, front matter, the queries a reader of that site would type for the page)
SITES = [
    ("docusaurus", "id: dockey\ntitle: Getting Frobnicated\nslug: /start/frob-setup\nsidebar_label: Frob start\n",
     ["dockey", "frob-setup", "/start/frob-setup", "Frob start", "Getting Frobnicated"]),
    ("hugo", "title: Getting Frobnicated\nlinkTitle: Frob quickstart\nslug: frobulous-begin\nurl: /guides/frobgate/\n",
     ["frobulous-begin", "frobgate", "Frob quickstart"]),
    ("jekyll", "title: Getting Frobnicated\npermalink: /manual/frobpage.html\n", ["frobpage"]),
    ("docusaurus-numeric-id", "id: 4711\ntitle: Getting Frobnicated\n", ["4711"]),
    ("hugo-url-list", "title: Getting Frobnicated\nurl: [/a/frobone/, /b/frobtwo/]\n", ["frobone", "frobtwo"]),
]
BODY = "\nThe page opens with a paragraph about the zapper.\n\n## Steps\n\nRun the zapper twice.\n"
OTHER = "# Other page\n\nText about the zapper as well, and nothing else.\n"


@pytest.mark.parametrize(("dialect", "front", "queries"), SITES, ids=[s[0] for s in SITES])
def test_a_site_id_slug_or_link_title_finds_the_page_by_keyword(tmp_path: Path, cli_main, dialect: str,
                                                                   front: str, queries: list[str]) -> None:
    docs, db = tmp_path / "docs", tmp_path / "i.db"
    docs.mkdir()
    (docs / "intro.md").write_text(f"---\n{front}---\n{BODY}")
    (docs / "other.md").write_text(OTHER)
    assert cli_main("--embedder", "none", "--db", str(db), "index", str(docs)).returncode == 0
    for query in queries:
        run = cli_main("--embedder", "none", "--db", str(db), "search", "--json", "--docs-dir", str(docs), "--", query)
        results = json.loads(run.stdout)["results"]
        assert results, (dialect, query)
        assert (results[0]["file_path"], results[0]["heading_path"]) == ("intro.md", "Getting Frobnicated"), query


def test_a_page_without_h1_is_addressed_by_its_front_matter_title(tmp_path: Path, cli_main) -> None:
    docs, db = tmp_path / "docs", tmp_path / "i.db"
    docs.mkdir()
    (docs / "intro.md").write_text(f"---\n{SITES[0][1]}---\n{BODY}")
    base = ("--embedder", "none", "--db", str(db))
    cli_main(*base, "index", str(docs))
    outline = cli_main(*base, "outline", "intro.md", "--docs-dir", str(docs)).stdout.splitlines()
    assert outline[1:] == ["[8-8] Getting Frobnicated", "  [10-12] Steps (8 tokens)"]
    by_title = cli_main(*base, "read", "intro.md", "Getting Frobnicated", "--docs-dir", str(docs))
    assert "The page opens with a paragraph" in by_title.stdout and by_title.returncode == 0
    # the old address of that section still reads it, and the subsection keeps its own address
    by_old = cli_main(*base, "read", "intro.md", "(preamble)", "--docs-dir", str(docs))
    assert by_old.stdout == by_title.stdout
    assert "Run the zapper twice" in cli_main(*base, "read", "intro.md", "Steps", "--docs-dir", str(docs)).stdout
    # a page of front matter and text alone: read by its title, its text first (no blank line)
    (docs / "good.md").write_text("---\ntitle: Good FM\n---\n\nJust text.\n")
    cli_main(*base, "index", str(docs))
    assert cli_main(*base, "read", "good.md", "Good FM", "--docs-dir", str(docs)).stdout == "Just text.\n"


@pytest.mark.parametrize(("text", "first"), [
    # an H1 heads the page: the preamble before it (badges, a logo) keeps its name
    ("---\ntitle: Site Title\n---\n\nBadges here.\n\n# The H1\n\nBody.\n", "(preamble)"),
    # the title is spelled like a heading of the file: that heading keeps its address
    ("---\ntitle: Steps\n---\n\nOpening words.\n\n## Steps\n\nBody.\n", "(preamble)"),
    # a title that reads as a breadcrumb would be taken for one
    ("---\ntitle: A > B\n---\n\nOpening words.\n\n## Steps\n\nBody.\n", "(preamble)"),
    # no front-matter title: nothing names the opening words
    ("---\nid: only-an-id\n---\n\nOpening words.\n\n## Steps\n\nBody.\n", "(preamble)"),
    # sidebar label and Hugo's link title name a page too
    ("---\nsidebar_label: Side Name\n---\n\nOpening words.\n\n## Steps\n\nBody.\n", "Side Name"),
    ("+++\nlinkTitle = \"Hugo Name\"\n+++\n\nOpening words.\n\n## Steps\n\nBody.\n", "Hugo Name"),
    # a page of front matter and text alone is one section, named by its title
    ("---\ntitle: Good FM\n---\n\nJust text.\n", "Good FM"),
    ("Just text, no front matter.\n", "(document)"),
])
def test_which_opening_section_takes_the_front_matter_title(text: str, first: str) -> None:
    doc = parse_document(text, "page.md")
    assert doc.sections[0].heading_path == first
    paths = [s.heading_path for s in doc.sections]
    assert len(paths) == len(set(paths))
    assert not any(p.endswith("[2]") for p in paths)  # no heading of the author is renumbered


@pytest.mark.parametrize(("metadata", "addresses"), [
    ({"id": "dockey", "slug": "/start/frob-setup"}, ["dockey", "/start/frob-setup"]),
    ({"id": 4711, "permalink": "/manual/page.html"}, ["4711", "/manual/page.html"]),
    ({"url": ["/a/one/", "/b/two/"]}, ["/a/one/", "/b/two/"]),
    # a clipped note's source link is not the page's address; nor are empty or non-text values
    ({"url": "https://example.com/article", "id": ""}, []),
    ({"slug": None, "id": True, "permalink": {"x": 1}}, []),
])
def test_which_front_matter_values_are_the_pages_addresses(metadata: dict, addresses: list[str]) -> None:
    from markdown_memory.markdown.titles import front_matter_addresses

    assert front_matter_addresses(metadata) == addresses
