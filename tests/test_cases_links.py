"""Links and tags as vaults and docs sites write them (issue 26): link fragments naming the
2nd/3rd of same-named headings by the document's own slug sequence (case 042), inline tags read
from the token stream with the vault's rules (044), and reference-style links (049).

Inputs are copies of ../shared/cases/<id>/ in tests/fixtures/cases/<id>/; each case runs over
the CLI (``cli_main``: ``index``, ``links``, ``list``, ``read``, ``search``), keyword-only.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from case_cli import Cli
from markdown_memory.markdown.parse import parse_document

CASES = Path(__file__).parent / "fixtures" / "cases"


def case_tree(case: str, dest: Path) -> Path:
    shutil.copytree(CASES / case, dest, ignore=shutil.ignore_patterns("case.md"))
    return dest


# -- 044 inline tags -------------------------------------------------------------------------------
# Sources: cyanheads/obsidian-mcp-server#138 and #140, openclaw-memory-libravdb#100 (case.md)
TAGS_044 = {
    "heading-tag.md": {"meeting", "decision/accepted"},
    "punctuation.md": set(),
    "whitespace.md": {"pf", "ph", "qi", "qj"},
    "math.md": set(),
    "html-comment.md": {"shown"},
    "html-block.md": set(),
    "adjacent.md": {"tl", "tm"},
    "link-text.md": {"tf"},
    "code.md": {"realtag"},
}


@pytest.fixture
def cli_044(tmp_path, cli_main) -> Cli:
    return Cli(cli_main, case_tree("044-obsidian-inline-tag-boundaries", tmp_path / "vault"), tmp_path / "i.db")


def test_case_044_each_note_has_the_tags_obsidian_reads(cli_044):
    listed = {d["path"]: set(d["tags"]) for d in cli_044("list")["documents"]}
    assert listed == TAGS_044


def test_case_044_tag_in_a_heading_filters_search(cli_044):
    results = cli_044("search", "daily call", "--tag", "meeting")["results"]
    assert results and results[0]["file_path"] == "heading-tag.md"
    accepted = cli_044("search", "ship", "--tag", "decision/accepted")["results"]
    assert [r["file_path"] for r in accepted][:1] == ["heading-tag.md"]


# Property: tags placed at generated positions -> the set the vault rules give
WORDS = st.sampled_from(["alpha", "beta", "notes", "x"])
TAG = st.from_regex(r"[a-z][a-z0-9_/-]{0,6}[a-z0-9]", fullmatch=True)


def _place(tag: str, where: str) -> tuple[str, bool]:
    """(Markdown text holding ``#tag`` at ``where``, whether the vault reads it as a tag)."""
    return {
        "paragraph": (f"Some text #{tag} here.", True),
        "line-start": (f"#{tag} starts a line.", True),
        "heading": (f"## Part #{tag}", True),
        "list": (f"- item #{tag}", True),
        "table": (f"| a | b |\n| - | - |\n| x | #{tag} |", True),
        "quote": (f"> quoted #{tag}", True),
        "link-text": (f"[see #{tag}](https://example.org)", True),
        "emphasis": (f"**#{tag}** bold", True),
        "adjacent": (f"#seed#{tag}", True),
        "code-span": (f"a `#{tag}` span", False),
        "fence": (f"```\n#{tag}\n```", False),
        "indented": (f"    #{tag} code", False),
        "math": (f"m $a #{tag}$ n", False),
        "math-block": (f"$$\n#{tag}\n$$", False),
        "comment": (f"x <!-- #{tag} --> y", False),
        "html-block": (f"<div>\n#{tag}\n</div>", False),
        "punctuation": (f"(#{tag})", False),
        "after-word": (f"word#{tag}", False),
        "destination": (f"[x](page.md#{tag})", False),
    }[where]


PLACES = ["paragraph", "line-start", "heading", "list", "table", "quote", "link-text", "emphasis", "adjacent",
          "code-span", "fence", "indented", "math", "math-block", "comment", "html-block", "punctuation",
          "after-word", "destination"]


@settings(max_examples=150, deadline=None)
@given(placed=st.lists(st.tuples(TAG, st.sampled_from(PLACES), WORDS), min_size=1, max_size=6))
def test_generated_tag_placements_give_the_vault_rule_tag_set(placed):
    blocks, want = ["# Note"], set()
    for tag, where, word in placed:
        text, read = _place(tag, where)
        blocks += [word, text]
        if read:
            want.add(tag)
            if where == "adjacent":
                want.add("seed")
    doc = parse_document("\n\n".join(blocks) + "\n", "note.md")
    assert {t.lower() for t in doc.vault.tag_names()} == want, "\n\n".join(blocks)


# -- 049 reference-style links ---------------------------------------------------------------------
# Sources: jgravelle/jdocmunch-mcp#48, textlint-rule-no-dead-link#105 (case.md)
@pytest.fixture
def cli_049(tmp_path, cli_main) -> Cli:
    return Cli(cli_main, case_tree("049-reference-style-links", tmp_path / "docs"), tmp_path / "i.db")


def test_case_049_reference_links_are_outgoing_links(cli_049):
    outgoing = cli_049("links", "README.md")["outgoing"]
    resolved = {(o["target_path"], o["target_heading_path"]) for o in outgoing if o["status"] == "resolved"}
    assert resolved == {("docs/install.md", "Install > Linux"), ("docs/faq.md", None),
                        ("docs/trouble shooting.md", None), ("docs/upgrade.md", None)}
    # each as written, on its own line
    assert [(o["raw"], o["line"]) for o in outgoing] == [
        ("[install guide][install]", 3), ("[FAQ][]", 3), ("[troubleshooting]", 3), ("[upgrade notes][UPGRADE]", 4)]


def test_case_049_reference_link_targets_have_backlinks(cli_049):
    for target in ("docs/faq.md", "docs/upgrade.md", "docs/install.md", "docs/trouble shooting.md"):
        assert [b["file_path"] for b in cli_049("links", target)["backlinks"]] == ["README.md"], target


FORMS = {
    "inline": "[{label}]({dest})",
    "full": "[text for it][{label}]",
    "collapsed": "[{label}][]",
    "shortcut": "[{label}]",
}


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(sorted(FORMS)), label=st.from_regex(r"[A-Za-z][A-Za-z ]{0,8}[a-z]", fullmatch=True),
       upper=st.booleans(), where=st.sampled_from(["paragraph", "list", "heading", "quote"]))
def test_every_commonmark_link_form_is_a_link(form, label, upper, where):
    """A link in any CommonMark form (definition label in any case, anywhere in the block
    structure) yields the one outgoing link to its destination."""
    dest = "docs/target page.md" if form != "inline" else "docs/target.md"
    written = FORMS[form].format(label=label, dest=dest)
    line = {"paragraph": f"See {written} now.", "list": f"- see {written}", "heading": f"## See {written}",
            "quote": f"> see {written}"}[where]
    definition = f"[{label.upper() if upper else label}]: <{dest}>"
    text = f"# Doc\n\n{line}\n\n{definition}\n" if form != "inline" else f"# Doc\n\n{line}\n"
    links = parse_document(text, "doc.md").links
    assert [(link.kind, link.first.replace("%20", " ")) for link in links] == [("markdown", dest)], text
    assert links[0].raw == (dest if form == "inline" else written) and links[0].line == 3


# -- 042 duplicate-heading fragments ---------------------------------------------------------------
# Sources: joshrotenberg/mdbook-lint#431, markdown-it-anchor#66, dendron#768 (case.md)
@pytest.fixture
def cli_042(tmp_path, cli_main) -> Cli:
    return Cli(cli_main, case_tree("042-duplicate-heading-fragments", tmp_path / "docs"), tmp_path / "i.db")


def test_case_042_links_to_duplicate_headings_resolve_by_number(cli_042):
    outgoing = {o["raw"]: (o["status"], o["target_path"], o["target_heading_path"])
                for o in cli_042("links", "links.md")["outgoing"]}
    assert outgoing == {
        "faq.md#install": ("resolved", "faq.md", "FAQ > Install"),
        "[[faq#Install]]": ("resolved", "faq.md", "FAQ > Install"),
        "faq.md#install-1": ("resolved", "faq.md", "FAQ > Usage > Install"),
        "faq.md#install-2": ("resolved", "faq.md", "FAQ > Install [2]"),
        "faq.md#usage-1": ("resolved", "faq.md", "FAQ > Usage [2]"),
        "#notes-1": ("resolved", "links.md", "Links > Notes [2]"),
    }


@pytest.mark.parametrize(("address", "token"), [
    ("faq.md#install", "dupfirsttoken"), ("faq.md#install-1", "dupsecondtoken"),
    ("faq.md#install-2", "dupthirdtoken"), ("faq.md#usage-1", "usagetwotoken"),
    ("links.md#notes-1", "samefiletoken"),
])
def test_case_042_read_a_numbered_fragment(cli_042, address, token):
    section = cli_042("read", address)
    assert token in section["content"]


def test_explicit_anchors_resolve(tmp_path, cli_main):
    """``{#id}`` on a heading and ``<a name>``/``<a id>`` anchors are fragments too."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "guide.md").write_text(
        "# Guide\n\n## Setup {#first-steps}\n\nsetuptoken\n\n## <a name=\"cfg\"></a>Configure\n\nconfigtoken\n\n"
        "## Later\n\nSee <a id=\"deep-anchor\"></a> here: latertoken\n")
    (root / "links.md").write_text("# Links\n\n[a](guide.md#first-steps) [b](guide.md#cfg) [c](guide.md#deep-anchor)\n")
    cli = Cli(cli_main, root, tmp_path / "i.db")
    outgoing = {o["raw"]: o["target_heading_path"] for o in cli("links", "links.md")["outgoing"]}
    assert outgoing == {"guide.md#first-steps": "Guide > Setup", "guide.md#cfg": "Guide > Configure",
                        "guide.md#deep-anchor": "Guide > Later"}
    assert "latertoken" in cli("read", "guide.md#deep-anchor")["content"]


def _github_slugs(titles: list[str]) -> list[str]:
    """github-slugger's document-wide numbering, written out here independently of the code."""
    from markdown_memory.text import heading_slug

    counts: dict[str, int] = {}
    out = []
    for title in titles:
        slug = original = heading_slug(title)
        while slug in counts:
            counts[original] += 1
            slug = f"{original}-{counts[original]}"
        counts[slug] = 0
        out.append(slug)
    return out


HEADING_TITLES = st.sampled_from(["Install", "Usage", "Install 1", "Notes", "Install-1", "FAQ", "Setup Guide"])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(headings=st.lists(st.tuples(st.integers(2, 4), HEADING_TITLES), min_size=1, max_size=8))
def test_fragment_made_by_the_slug_rules_resolves_to_its_heading(make_engine, headings):
    """For any generated document, the fragment the slug rules give any heading (GitHub's
    document-wide numbering) reads that heading's section, through a link and through read."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        root.mkdir()
        lines = ["# Top", ""]
        for i, (level, title) in enumerate(headings):
            lines += [f"{'#' * level} {title}", "", f"body token{i}x here.", ""]
        (root / "doc.md").write_text("\n".join(lines))
        slugs = _github_slugs(["Top"] + [t for _lvl, t in headings])[1:]
        (root / "links.md").write_text("# Links\n\n" + "\n".join(f"- [h{i}](doc.md#{s})" for i, s in enumerate(slugs)) + "\n")
        engine = make_engine(root, "none", db=Path(tmp) / "i.db")
        engine.index()
        outgoing = engine.links("links.md", limit=50).outgoing
        for i, slug in enumerate(slugs):
            section = engine.read(f"doc.md#{slug}", "")
            assert f"token{i}x" in section.content, (slug, section.heading_path)
            assert outgoing[i].status == "resolved" and outgoing[i].target_heading_path == section.heading_path
        engine.close()


def test_tags_in_text_nested_past_the_parser_limit_are_read():
    """Text nested deeper than markdown-it parses is indexed as plain text (nesting.py); its
    tags still count, in the section it sits in."""
    doc = parse_document("# T\n\nintro #top\n\n" + "> " * 300 + "quoted #deeptag here\n\n## Next #after\n", "a.md")
    assert doc.warnings and doc.vault.tags == (("top", 0), ("deeptag", 0), ("after", 1))


# -- 060 footnotes and other bracket syntax that is not a link ------------------------------------
# Sources: MarkEdit-app/MarkEdit#1152, rwxrob/keg-spec#56, marktext/marktext#1552 (case.md)
@pytest.fixture
def cli_060(tmp_path, cli_main) -> Cli:
    return Cli(cli_main, case_tree("060-footnote-definitions", tmp_path / "docs"), tmp_path / "i.db")


def test_case_060_footnote_text_is_searchable(cli_060):
    for token in ("footnoterfctoken", "footnoteurltoken", "footnotelongtoken"):
        assert cli_060.first(token)[0] == "paper.md", token


def test_case_060_footnotes_are_not_links_but_a_link_inside_one_is(cli_060):
    outgoing = cli_060("links", "paper.md")["outgoing"]
    assert [(o["raw"], o["status"], o["target_path"]) for o in outgoing] == [("guide.md", "resolved", "guide.md")]
    assert [b["file_path"] for b in cli_060("links", "guide.md")["backlinks"]] == ["paper.md"]


def test_case_060_mcp_get_links_and_search(tmp_path):
    import json

    import anyio

    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.models import SearchRequest

    root = case_tree("060-footnote-definitions", tmp_path / "docs")
    runtime = Runtime(Settings.load(root, tmp_path / "mcp.db", "none", auto_index=False))

    def call(tool, fn):
        result = anyio.run(runtime.call, tool, fn)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    try:
        call("index_directory", lambda: runtime.index_directory(None, False))
        links = call("get_links", lambda: runtime.get_links("paper.md", 0))
        assert [o["raw"] for o in links["outgoing"]] == ["guide.md"]
        found = call("search_docs", lambda: runtime.search_docs(SearchRequest("footnoterfctoken")))
        assert found["results"][0]["file_path"] == "paper.md"
    finally:
        runtime.shutdown()


#: bracket syntax of the dialects that is not a link, each with the word it must keep searchable
NOT_LINKS = {
    "footnote reference and definition": ("Claim.[^note]\n\n[^note]: fnworda", "fnworda"),
    "numbered footnote with a URL only": ("Claim.[^1]\n\n[^1]: https://example.com/fnwordb", "fnwordb"),
    "footnote used before and after": ("A[^x] and B[^x].\n\n[^x]: fnwordc", "fnwordc"),
    "undefined footnote": ("Claim fnwordd.[^missing]", "fnwordd"),
    "inline footnote": ("Claim fnworde.^[an inline note]", "fnworde"),
    "task list": ("- [ ] open fnwordf\n- [x] done\n- [X] done too", "fnwordf"),
    "github alert": ("> [!NOTE]\n> fnwordg alert text", "fnwordg"),
    "obsidian callout with title": ("> [!tip] Title\n> fnwordh", "fnwordh"),
    "pandoc citation": ("As shown [@smith2020; @doe, p. 3] fnwordi.", "fnwordi"),
    "bare citation key": ("See [@key] fnwordj.", "fnwordj"),
    "shortcut without definition": ("Press [Enter] or [Ctrl+C] fnwordk.", "fnwordk"),
    "collapsed without definition": ("A [thing][] fnwordl.", "fnwordl"),
    "checkbox in a table": ("| a | b |\n|---|---|\n| [x] | fnwordm |", "fnwordm"),
}


@pytest.mark.parametrize("name", sorted(NOT_LINKS))
def test_bracket_syntax_that_is_not_a_link_is_no_link(name):
    body, word = NOT_LINKS[name]
    text = f"# Note\n\n{body}\n\nA [real link](other.md) and [[Wiki Target]].\n"
    doc = parse_document(text, "note.md")
    assert [(link.kind, link.first) for link in doc.links] == [("markdown", "other.md"), ("wikilink", "Wiki Target")], name
    assert any(word in p.text for p in doc.passages), (name, [p.text for p in doc.passages])
