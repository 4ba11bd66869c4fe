"""Property tests for the parser (issue 6): for random Markdown-ish input, sections never
overlap, every non-blank line outside front matter belongs to exactly one section, line
ranges stay inside the file, breadcrumbs are unique per document (also when a heading is
spelled like a generated ``[n]`` or ``(Part n)`` address) and never the base path of other
sections, ``(Part n)`` pieces reassemble byte for byte to the base section, and passages sit
inside their section.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.markdown.parse import parse_document, split_lines

LINE_KINDS = [
    "# Title", "## Sub", "### Deep", "#### Deeper", "##", "#", "Title", "===", "---", "***", "- item",
    "  - nested item", "1. step", "> quote", "> # quoted heading", "> [!note] callout", "```", "```python",
    "~~~", "````", "    indented code", "<!--", "-->", "<div>", "</div>", "<details>", "| a | b |",
    "| --- | --- |", "| `x || y` | z |", "title: x", "...", "", "", "", "\ufeff# bom heading",
    "\u200b", "\t", "text with words", "Another paragraph line.", "import x from 'y'", "\\# escaped",
    # Headings spelled like generated addresses (duplicate suffix, part name) or with attributes.
    "## Sub [2]", "# Title [2]", "# Title (Part 2)", "## Sub (Part 1)", "## Sub (Part 2) [2]", "## Sub {#sub}",
]
WORD = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
LINE = st.one_of(
    st.sampled_from(LINE_KINDS),
    st.builds(lambda a, b: f"{a} {b}", st.sampled_from(LINE_KINDS), WORD),
    WORD,
)
DOC = st.lists(LINE, max_size=60).map("\n".join)
ENDING = st.sampled_from(["\n", "\r\n", "\r"])


def check_invariants(text: str, max_tokens: int = 800, path: str = "doc.md") -> None:
    doc = parse_document(text, path, max_section_tokens=max_tokens)
    lines = split_lines(text)
    n = len(lines)
    assert doc.line_count == n
    spans = sorted((s.start_line, s.end_line) for s in doc.sections)
    for start, end in spans:
        assert 1 <= start <= end <= n, (start, end, n)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 < b0, f"sections overlap: {(a0, a1)} and {(b0, b1)}"
    for i, line in enumerate(lines, start=1):
        if i <= doc.front_matter_end or not line.strip():
            continue
        owners = [s for s in doc.sections if s.start_line <= i <= s.end_line]
        assert len(owners) == 1, f"line {i} {line!r} belongs to {len(owners)} sections"
    paths = [s.heading_path for s in doc.sections]
    assert len(paths) == len(set(paths)), paths
    # A read of a base path returns its own pieces only: no other section is addressed by it.
    for s in doc.sections:
        assert not any(o.base_path == s.heading_path and o.base_path != s.base_path for o in doc.sections), (
            s.heading_path, paths)
    for s in doc.sections:
        assert s.text == "\n".join(lines[s.start_line - 1 : s.end_line])
        assert "\n" not in s.title and "\ufeff" not in s.heading_path
    by_base: dict[str, list] = {}
    for s in doc.sections:
        by_base.setdefault(s.base_path, []).append(s)
    for base, parts in by_base.items():
        if len(parts) > 1 or parts[0].part:
            assert [p.part for p in parts] == list(range(1, len(parts) + 1)), base
            whole = "\n".join(lines[parts[0].start_line - 1 : parts[-1].end_line])
            assert "\n".join(p.text for p in parts) == whole
            for p, q in zip(parts, parts[1:]):
                assert q.start_line == p.end_line + 1 or not any(
                    lines[k].strip() for k in range(p.end_line, q.start_line - 1)
                )
    for p in doc.passages:
        sec = doc.sections[p.section]
        assert p.text.strip()
        assert sec.start_line <= p.start_line <= sec.end_line, (p, sec.start_line, sec.end_line)
        assert p.start_line <= p.end_line <= n


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOC)
def test_parser_invariants_on_markdownish_input(text):
    check_invariants(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, min_size=5, max_size=80), ENDING)
def test_parser_invariants_with_small_part_budget_and_any_line_ending(lines, ending):
    # A tiny token budget forces (Part n) splits on almost every section.
    check_invariants(ending.join(lines), max_tokens=12)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_parser_never_raises_on_arbitrary_text(text):
    check_invariants(text)


@settings(max_examples=80, deadline=None)
@given(DOC)
def test_mdx_parse_keeps_invariants_except_esm_lines(text):
    doc = parse_document(text, "doc.mdx")
    lines = split_lines(text)
    spans = sorted((s.start_line, s.end_line) for s in doc.sections)
    for (_a0, a1), (b0, _b1) in zip(spans, spans[1:]):
        assert a1 < b0
    assert len({s.heading_path for s in doc.sections}) == len(doc.sections)
    assert all(1 <= s.start_line <= s.end_line <= len(lines) for s in doc.sections)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff\u200b"]), ENDING)
def test_leading_invisible_characters_never_hide_the_first_heading(prefix, ending):
    text = ending.join(["# Guide", "", "intro", "", "## Part", "", "body"])
    plain = parse_document(text, "a.md")
    marked = parse_document(prefix + text, "a.md")
    assert [(s.heading_path, s.start_line, s.end_line) for s in marked.sections] == [
        (s.heading_path, s.start_line, s.end_line) for s in plain.sections
    ]
    assert marked.sections[0].heading_path == "Guide"


LOOKALIKE_HEADING = st.builds(
    lambda level, title: f"{'#' * level} {title}",
    st.integers(1, 3),
    st.sampled_from(["A", "A [2]", "A [3]", "A (Part 1)", "A (Part 2)", "A (Part 2) [2]", "A [2] (Part 1)", "A {#a}", "A > A"]),
)
LOOKALIKE_DOC = st.lists(
    st.one_of(LOOKALIKE_HEADING, st.sampled_from(["", "body words here", "more text in the section"])),
    min_size=3, max_size=40,
).map("\n\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LOOKALIKE_DOC, st.sampled_from([8, 800]))
def test_headings_spelled_like_generated_addresses_never_share_one(text, max_tokens):
    # Regression (tester): "## Same [2]" beside duplicate "## Same" headings, and "# Big (Part 2)"
    # beside a long "# Big", shared an address with a generated one.
    check_invariants(text, max_tokens=max_tokens)
