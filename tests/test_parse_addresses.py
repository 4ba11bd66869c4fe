"""Every section keeps its own address through the Engine (outline, read, search), whatever
its heading looks like, and the title a page declares in front matter can be searched.

Regressions from a tester's report: a heading written like a generated suffix (``Same [2]``,
``Big (Part 2)``) shared its address with a generated one; heading attribute blocks
(``{#id}``) stayed in breadcrumbs; a front-matter ``title`` beside a different H1 was lost.
"""

from __future__ import annotations

from pathlib import Path

from markdown_memory.models import SearchRequest

DUPLICATES = (
    "# T\n\n## Same\n\nalpha\n\n## Same\n\nbeta\n\n### Sub\n\nsubtext\n\n"
    "## Same\n\ngamma\n\n## Same [2]\n\ndelta\n"
)
LONG = "\n\n".join(f"Paragraph {i} with several words to make the section long enough to split." for i in range(300))


def write(root: Path, name: str, text: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")


def test_literal_duplicate_suffix_heading_has_its_own_outline_entry_read_and_hits(tmp_path, make_engine):
    root = tmp_path / "docs"
    write(root, "dup.md", DUPLICATES)
    engine = make_engine(root, embedder="none")
    engine.index()
    outline = [(h.start_line, h.end_line_with_children, h.heading_path)
               for h in engine.outline("dup.md").headings]
    assert outline == [
        (1, 21, "T"), (3, 5, "T > Same"), (7, 13, "T > Same [3]"), (11, 13, "T > Same [3] > Sub"),
        (15, 17, "T > Same [4]"), (19, 21, "T > Same [2]"),
    ]
    assert engine.read("dup.md", "T > Same [2]").content == "## Same [2]\n\ndelta"
    assert engine.read("dup.md", "T > Same [3]").content == "## Same\n\nbeta"
    beta = engine.search(SearchRequest("beta")).results[0]
    delta = engine.search(SearchRequest("delta")).results[0]
    assert (beta.heading_path, delta.heading_path) == ("T > Same [3]", "T > Same [2]")
    assert engine.read("dup.md", beta.heading_path).content == "## Same\n\nbeta"


def test_literal_part_heading_and_generated_parts_read_apart(tmp_path, make_engine):
    root = tmp_path / "docs"
    write(root, "p.md", f"# Big\n\n{LONG}\n\n# Big (Part 2)\n\nliteral\n")
    engine = make_engine(root, embedder="none")
    engine.index()
    assert engine.read("p.md", "Big (Part 2)").content == "# Big (Part 2)\n\nliteral"
    whole = engine.read("p.md", "Big", page_tokens=100_000)
    assert whole.content == f"# Big\n\n{LONG}" and whole.next_cursor is None
    piece = engine.read("p.md", "Big (Part 2) [2]").content
    assert "literal" not in piece and piece in LONG
    headings = engine.outline("p.md").headings
    assert [(h.heading_path, h.parts) for h in headings] == [("Big", 8), ("Big (Part 2)", None)]
    hits = engine.search(SearchRequest("literal")).results
    assert hits[0].heading_path == "Big (Part 2)" and hits[0].content.endswith("literal")


def test_heading_attribute_blocks_stay_out_of_breadcrumbs_but_in_the_text(tmp_path, make_engine):
    root = tmp_path / "docs"
    write(root, "attrs.md", "# Remote setup\n\n## Getting started {#getting-started}\n\nRun rclone config.\n")
    engine = make_engine(root, embedder="none")
    engine.index()
    assert [h.heading_path for h in engine.outline("attrs.md").headings] == [
        "Remote setup", "Remote setup > Getting started"]
    answer = engine.read("attrs.md", "Getting started")
    assert answer.content == "## Getting started {#getting-started}\n\nRun rclone config."
    assert engine.search(SearchRequest("rclone config")).results[0].heading_path == "Remote setup > Getting started"

