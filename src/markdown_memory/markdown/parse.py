"""Split one Markdown document into heading-addressed sections and embeddable passages.

Data flow: decoded text -> long ``data:`` URI payloads elided (``text.elide_data_uris``) -> line split (CRLF/CR -> LF; leading BOM and zero-width characters
dropped, U+FEFF dropped everywhere) -> front matter detection -> markdown-it-py block tokens (CommonMark preset, HTML
blocks on, GFM tables and strikethrough, footnote definitions, docs-site containers (``containers.py``), nesting limit raised and never silently hit, see
``nesting.py``) -> unclosed-fence repair -> sections from top-level headings (titles: the plain
text of the heading, ``inline.py``) ->
``(Part n)`` split of long sections -> passages.

Line numbers are 1-based, inclusive and refer to the original file; section text is the exact
source lines joined with ``\\n``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin

from ..text import count_tokens, elide_data_uris, match_form
from .containers import container_plugin
from .frontmatter import Metadata, detect_front_matter
from .inline import html_plain_text, inline_plain_text
from .links import RawLink, extract_inline, front_matter_links, text_tags
from .nesting import MAX_NESTING, parse_without_cuts, record_cuts
from .passages import MAX_PASSAGE_CHARS, RawPassage, esm_lines, extract_passages, group_long_runs, split_window
from .titles import choose_title, front_matter_title
from .vault import VaultMeta, document_names, vault_meta

#: Sections longer than this many estimated tokens are stored as ``(Part n)`` pieces.
MAX_SECTION_TOKENS = 800

PREAMBLE = "(preamble)"
WHOLE_DOCUMENT = "(document)"
UNTITLED = "(untitled)"
SEPARATOR = " > "

# Invisible characters that editors and converters leave at the start of a file.
_LEADING_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060\ufffe"
_ATX_DEEP = re.compile(r"^ {0,3}#{2,6}(?:[ \t]|$)")


@dataclass
class Passage:
    """An embeddable unit: a paragraph, list item, table row, code block or a window of one."""

    section: int  # index into ParsedDocument.sections
    ordinal: int
    kind: str  # paragraph | list_item | table_row | code | heading | html
    text: str
    start_line: int
    end_line: int
    lang: str = ""  # a fenced code block's language (``vault.code_language``), else ""


@dataclass
class Section:
    """A heading-addressed slice of the file (own text only, children are separate sections).

    ``heading_path`` is unique within the document, and never equal to another section's
    ``base_path``: a repeated breadcrumb gets `` [n]`` (the smallest n not spelled by a heading of
    the file). ``base_path`` is the address of the whole section: ``heading_path`` without the
    piece name ``" (Part n)"`` (itself `` [n]``-suffixed in the rare file with a heading written
    ``X (Part n)``); ``part`` is 0 for an unsplit section, else 1..n; ``level`` is 0 for the
    preamble.
    """

    ordinal: int
    heading_path: str
    base_path: str
    title: str
    level: int
    part: int
    start_line: int
    end_line: int
    text: str
    tokens: int
    parent: int | None  # ordinal of the parent section (first part), None at top


@dataclass
class ParsedDocument:
    """What ``parse_document`` makes of one file, and what ``Store.insert_document`` stores
    (with the file's own facts, ``store.DocumentFile``): the document's fields, its typed
    sections and passages (a passage's ``section`` indexes ``sections``), links and block ids.

    ``metadata`` is the front matter (``{}`` without); ``tokens`` the estimated tokens of the
    whole text (``data:`` URIs elided); ``vault`` its names, tags and dates; ``names`` the
    ``(name, "title" | "alias")`` pairs it is found by (``vault.document_names``); ``warnings``
    name a line each. ``title`` follows ``titles.py`` (front matter, H1, navigation, file name);
    ``lead`` indexes the section where the page starts (``titles.py``; 0 when it has none)."""

    title: str
    metadata: Metadata
    front_matter_end: int
    line_count: int
    sections: list[Section]
    passages: list[Passage]
    warnings: list[str] = field(default_factory=list)
    links: list[RawLink] = field(default_factory=list)  # links.py: wikilinks and relative Markdown links
    block_ids: list[tuple[int, str]] = field(default_factory=list)  # (section index, ``^id``)
    tokens: int = 0
    vault: VaultMeta = field(default_factory=VaultMeta)
    names: list[tuple[str, str]] = field(default_factory=list)
    lead: int = 0


def _markdown() -> MarkdownIt:
    # Inline parsing (links, emphasis, code spans) is run for headings only (_parse,
    # _inline_children): sections and passages are cut from source text and inline ``content``,
    # and parsing every paragraph and table cell into child tokens cost a third of the parse time
    # and most of its memory on a 40,000-row table or a 3 MB line (case 029).
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING}).enable(["table", "strikethrough"])
    # footnote definitions (``[^id]: text``) are blocks of their own, in place, whose text is
    # indexed: without the rule a one-word or URL-only note is a link reference definition (case 060)
    md.use(footnote_plugin, inline=False, move_to_end=False)
    return record_cuts(container_plugin(md).disable("inline"))


_MD = _markdown()


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` with CRLF/CR normalised, leading invisible characters and every
    U+FEFF removed.

    Unlike ``str.splitlines`` this only splits on ``\\n``/``\\r``, the CommonMark line endings.
    """
    text = text.lstrip(_LEADING_INVISIBLE)
    # U+FEFF anywhere else is a BOM left by concatenating files (or an obsolete zero-width
    # no-break space): invisible either way, and it would stop a heading from being one.
    text = text.replace("\ufeff", "")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# A trailing heading attribute block (Pandoc, PHP Markdown Extra, Hugo, MkDocs attr_list):
# ``{#id}``, ``{#id .class key=val}``, ``{.class}``, ``{: #id }``. Only a block whose first
# attribute is an id or a class counts, so ``GET /users/{id}`` keeps its braces. A closing
# ``#`` sequence before it (``## Title ## {#id}``) goes too.
_HEADING_ATTRS = re.compile(r"(?:[ \t]+#+)?[ \t]+\{:?[ \t]*[#.][^{}\n]*\}[ \t]*$")


def strip_heading_attributes(text: str) -> str:
    """``text`` without a trailing attribute block (``{#id}``, ``{.class}``, ``{: #id}``); text
    that is only an attribute block is returned as is. Also used on headings an agent types."""
    stripped = _HEADING_ATTRS.sub("", " " + text).strip()
    return stripped or text


def _heading_title(inline: Token) -> str:
    """The heading's plain text as a reader sees it (``inline.py``) on one line, without a
    trailing attribute block (cut from the source first: ``Code `{#x}``` keeps its code span);
    a heading that is only an attribute block keeps it."""
    raw = inline.content.strip()
    if strip_heading_attributes(raw) != raw:
        return heading_plain_text(raw)
    return inline_plain_text(inline.children)


def heading_plain_text(written: str) -> str:
    """The title a heading written as ``written`` (raw inline Markdown, e.g. copied from the
    file: ``[Release](https://x) notes {#rel}``) gets: ``Release notes``. Also for headings an
    agent types."""
    return inline_plain_text(_inline_children(strip_heading_attributes(written.strip()).replace("\x00", "\ufffd"), {}))


_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)(?:</h\1\s*>|\Z)", re.S | re.I)


def _html_heading(block: str) -> tuple[int, str] | None:
    """(level, title) when an HTML block opens with ``<h1>``..``<h6>`` holding text (READMEs
    and generated API docs use them as headings); None otherwise (e.g. a logo in an ``<h1>``)."""
    m = _HTML_HEADING.match(block)
    if m is None:
        return None
    title = html_plain_text(m.group(2))
    return (int(m.group(1)), title) if title else None


def _fence_is_closed(tok: Token, lines: list[str]) -> bool:
    assert tok.map is not None
    start, end = tok.map
    if end - 1 <= start:
        return False
    last = lines[end - 1].strip()
    marker = tok.markup[0]
    return len(last) >= len(tok.markup) and set(last) == {marker}


def _inline_children(text: str, env: dict[str, Any]) -> list[Token]:
    """markdown-it's inline tokens of ``text`` (``env``: the parse's, for reference links)."""
    children: list[Token] = []
    _MD.inline.parse(text, _MD, env, children)
    return children


def _parse(text: str, env: dict[str, Any]) -> list[Token]:
    """Block tokens of ``text``; only the inline tokens of headings get their ``children``."""
    tokens = _MD.parse(text, env)
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and i and tokens[i - 1].type == "heading_open":
            tok.children = _inline_children(tok.content, env)
    return tokens


def _repair_unclosed_fences(
    parse_lines: list[str], lines: list[str], warnings: list[str], deep: list[RawPassage], env: dict[str, Any]
) -> list[Token]:
    """Parse, closing any top-level fence that runs to EOF before a later ``##`` heading.

    Evidence required: the fence reaches the end of the file unclosed, and an ATX heading of
    level >= 2 follows a blank line inside it. The blank line is replaced (in the parse copy
    only) by a closing fence, so line numbers do not move. Runs nested past markdown-it's
    limit are blanked in the copy too, their text appended to ``deep`` (``nesting.py``).
    ``env`` receives the final parse's env (link reference definitions).
    """
    n = len(parse_lines)
    for _ in range(50):
        env.clear()
        tokens = parse_without_cuts(_parse, parse_lines, lines, warnings, deep, env)
        repaired = False
        for tok in tokens:
            if tok.type != "fence" or tok.level != 0 or tok.map is None:
                continue
            start, end = tok.map
            if end < n or _fence_is_closed(tok, parse_lines):
                continue
            for j in range(start + 2, end):
                if _ATX_DEEP.match(parse_lines[j]) and not parse_lines[j - 1].strip():
                    parse_lines[j - 1] = tok.markup
                    warnings.append(
                        f"unterminated code fence opened at line {start + 1}; closed before line {j + 1}"
                    )
                    repaired = True
                    break
            else:
                warnings.append(f"unterminated code fence opened at line {start + 1} runs to the end of the file")
            if repaired:
                break
        if not repaired:
            return tokens
    return tokens


def _top_level_block_starts(tokens: list[Token]) -> list[int]:
    starts = set()
    for tok in tokens:
        if tok.level == 0 and tok.map is not None and tok.nesting >= 0:
            starts.add(tok.map[0])
    return sorted(starts)


def _trim_end(lines: list[str], start: int, end: int) -> int:
    """Last non-blank 0-based line index in [start, end), or start when all are blank."""
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return end - 1


def parse_document(text: str, path: str = "", *, max_section_tokens: int = MAX_SECTION_TOKENS,
                   nav_title: str | None = None) -> ParsedDocument:
    """Parse decoded Markdown ``text`` into sections and passages.

    ``path`` is only used to pick MDX handling (``.mdx``) and the title fallback (file name);
    ``nav_title`` is the docs site navigation's title for the page (``titles.py``).
    Never raises on any input string; problems become ``warnings`` (strings naming a line).
    """
    elided = elide_data_uris(text)
    lines = split_lines(elided)
    warnings: list[str] = []
    fm = detect_front_matter(lines)
    if fm.warning:
        warnings.append(fm.warning)
    parse_lines = list(lines)
    for i in range(fm.end_line):
        parse_lines[i] = ""
    deep: list[RawPassage] = []
    env: dict[str, Any] = {}
    tokens = _repair_unclosed_fences(parse_lines, lines, warnings, deep, env)
    mdx = path.lower().endswith(".mdx")

    headings = _top_level_headings(tokens)
    n = len(lines)
    # MDX import/export lines are code for the bundler, not content: alone they make no preamble.
    skip = esm_lines(tokens) if mdx else set()
    h1 = next((t for _, level, t in headings if level == 1 and t), None)
    # a page without H1 is headed by its front-matter title on its site (titles.py)
    raw = _raw_sections(lines, headings, fm.end_line, skip, None if h1 else front_matter_title(fm.metadata))
    sections = _sections(lines, raw, _top_level_block_starts(tokens), max_section_tokens)

    raw_passages = extract_passages(tokens, lines, mdx=mdx)
    if deep:
        raw_passages = sorted(raw_passages + deep, key=lambda p: p.start_line)
    passages = _assign_passages(raw_passages, sections)
    title = choose_title(fm.metadata, h1, nav_title, path)
    inline = extract_inline(tokens, [s.start_line for s in sections], lines, env)
    links, block_ids = inline.links, inline.block_ids
    if sections and fm.end_line:
        links = front_matter_links(lines, fm.end_line) + links
    deep_lines = {d.start_line for d in deep}  # blanked for the parse: their tags are read from the text
    deep_tags = [(t, p.section) for p in passages if p.start_line in deep_lines for t in text_tags(p.text)]
    vault = vault_meta(fm.metadata, sorted(inline.tags + deep_tags, key=lambda tag: tag[1]))
    return ParsedDocument(
        title=title,
        metadata=fm.metadata,
        front_matter_end=fm.end_line,
        line_count=n,
        sections=sections,
        passages=passages,
        warnings=warnings,
        links=links,
        block_ids=block_ids,
        tokens=count_tokens(elided),
        vault=vault,
        names=document_names(title, fm.metadata, vault) + ([(h1, "title")] if h1 and h1 != title else []),
        lead=_lead_section(sections, headings),
    )


def _top_level_headings(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """Top-level headings as (0-based line, level, title): Markdown headings and HTML blocks
    opening with ``<h1>``..``<h6>``."""
    headings: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map is not None:
            headings.append((tok.map[0], int(tok.tag[1]), _heading_title(tokens[i + 1])))
        elif tok.type == "html_block" and tok.level == 0 and tok.map is not None:
            html_heading = _html_heading(tok.content)
            if html_heading is not None:
                headings.append((tok.map[0], *html_heading))
    return headings


def _raw_sections(lines: list[str], headings: list[tuple[int, int, str]], first_content: int,
                  skip: set[int], page_name: str | None = None) -> list[tuple[int, int, int, str]]:
    """(start0, end0_exclusive, level, title) of each section: a preamble (level 0) when a
    line before the first heading has content (lines in ``skip`` do not count), then one per
    heading. The preamble starts at its first non-blank line and is titled ``page_name`` (the page's front-matter title) unless that
    is spelled like a heading of the file (whose address it would take) or is a breadcrumb."""
    n = len(lines)
    raw: list[tuple[int, int, int, str]] = []
    first_heading = headings[0][0] if headings else n
    if any(lines[i].strip() and i not in skip for i in range(first_content, first_heading)):
        name = PREAMBLE if headings else WHOLE_DOCUMENT
        taken = {match_form(t, fold_case=False) for _, _, t in headings}
        if page_name and SEPARATOR not in page_name and match_form(page_name, fold_case=False) not in taken:
            name = page_name
        start = next(i for i in range(first_content, first_heading) if lines[i].strip())  # not a blank line
        raw.append((start, first_heading, 0, name))
    for k, (line, level, title) in enumerate(headings):
        end = headings[k + 1][0] if k + 1 < len(headings) else n
        raw.append((line, end, level, title))
    return raw


def _sections(lines: list[str], raw: list[tuple[int, int, int, str]], block_starts: list[int],
              max_section_tokens: int) -> list[Section]:
    """Sections of the raw sections in order. Breadcrumbs: the parent's address + " > " + the
    heading's own title, made unique (see _claim_address); a section cut into pieces also names
    each piece " (Part n)"."""
    sections: list[Section] = []
    stack: list[tuple[int, str, int]] = []  # (level, address, ordinal of first part)
    natural = _natural_paths(raw)
    reserved = {match_form(p, fold_case=False) for p in natural}  # compared as _claim_address does
    used: set[str] = set()
    for (start, end, level, title), own in zip(raw, natural):
        shown = title if title or level == 0 else UNTITLED
        if level == 0:
            wanted = shown
            parent = None
        else:
            while stack and stack[-1][0] >= level:
                stack.pop()
            parent = stack[-1][2] if stack else None
            wanted = f"{stack[-1][1]}{SEPARATOR}{shown}" if stack else shown
        path_text = _claim_address(wanted, own, used, reserved)
        ordinal = len(sections)
        if level > 0:
            stack.append((level, path_text, ordinal))
        last = _trim_end(lines, start, end)

        def part_name(k: int, base: str = path_text) -> str:
            return _claim_address(f"{base} (Part {k})", None, used, reserved)

        sections.extend(
            _split_parts(lines, start, last, level, shown, path_text, parent, ordinal, block_starts,
                         max_section_tokens, part_name)
        )
    return sections


def _natural_paths(raw: list[tuple[int, int, int, str]]) -> list[str]:
    """The breadcrumb each raw section (start, end, level, title) spells with its own title and
    its ancestors' own titles, before any ``[n]`` suffix: the addresses the author wrote."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []  # (level, natural path)
    for _start, _end, level, title in raw:
        shown = title if title or level == 0 else UNTITLED
        if level == 0:
            out.append(shown)
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        path = f"{stack[-1][1]}{SEPARATOR}{shown}" if stack else shown
        stack.append((level, path))
        out.append(path)
    return out


def _claim_address(wanted: str, own: str | None, used: set[str], reserved: set[str]) -> str:
    """A heading path no other section of the document has or will have, added to ``used``.

    Addresses are compared in ``text.match_form`` with case kept (``used`` and ``reserved`` hold
    that form), so two headings that only look alike get ``[n]`` as duplicates do.
    ``wanted`` is kept when free: not ``used`` by an earlier section and not ``reserved`` (the
    natural path of some section, see ``_natural_paths``) unless it is this section's own
    natural path ``own``. Otherwise the smallest ``wanted [n]`` (n >= 2) that is neither used
    nor reserved: a later duplicate heading, or a generated ``(Part n)`` name (``own`` None),
    never takes the address of a heading written that way (``## Same [2]``, ``# Big (Part 2)``),
    wherever that heading is in the file. Numbers depend only on the sections that share
    ``wanted`` and on headings spelled like a candidate, so an unrelated edit renumbers nothing.
    """
    def key(address: str) -> str:  # identical-looking spellings (NFC/NFD, invisible characters) are one address
        return match_form(address, fold_case=False)

    if key(wanted) not in used and (wanted == own or key(wanted) not in reserved):
        used.add(key(wanted))
        return wanted
    n = 2
    while key(f"{wanted} [{n}]") in used or key(f"{wanted} [{n}]") in reserved:
        n += 1
    chosen = f"{wanted} [{n}]"
    used.add(key(chosen))
    return chosen


def _lead_section(sections: list[Section], headings: list[tuple[int, int, str]]) -> int:
    """Index of the section where the page starts: the H1 section when the first heading is the
    H1 (a preamble before it is badges or a logo), else the first section."""
    if headings and headings[0][1] == 1:
        first_line = headings[0][0] + 1
        for i, sec in enumerate(sections):
            if sec.start_line == first_line:
                return i
    return 0


def _split_parts(
    lines: list[str],
    start: int,
    last: int,
    level: int,
    title: str,
    path_text: str,
    parent: int | None,
    ordinal: int,
    block_starts: list[int],
    max_tokens: int,
    part_name: Callable[[int], str],
) -> list[Section]:
    """One Section, or pieces cut at top-level block starts when longer than ``max_tokens``
    (estimated tokens). Piece k (1-based) is addressed ``part_name(k)``, normally
    ``"<path_text> (Part k)"``; every piece keeps ``path_text`` as its ``base_path``."""
    text = "\n".join(lines[start : last + 1])
    tokens = count_tokens(text)
    if tokens <= max_tokens:
        return [Section(ordinal, path_text, path_text, title, level, 0, start + 1, last + 1, text, tokens, parent)]
    cuts = [b for b in block_starts if start < b <= last]
    pieces: list[tuple[int, int]] = []
    piece_start = start
    budget = 0
    prev = start
    for cut in cuts + [last + 1]:
        block_tokens = count_tokens("\n".join(lines[prev:cut])) + 1
        if budget and budget + block_tokens > max_tokens:
            pieces.append((piece_start, prev - 1))
            piece_start = prev
            budget = 0
        budget += block_tokens
        prev = cut
    pieces.append((piece_start, last))
    if len(pieces) == 1:
        return [Section(ordinal, path_text, path_text, title, level, 0, start + 1, last + 1, text, tokens, parent)]
    out = []
    for k, (a, b) in enumerate(pieces, start=1):
        part_text = "\n".join(lines[a : b + 1])
        out.append(
            Section(
                ordinal + k - 1,
                part_name(k),
                path_text,
                title,
                level,
                k,
                a + 1,
                b + 1,
                part_text,
                count_tokens(part_text),
                parent,
            )
        )
    return out


def _assign_passages(raw: list[RawPassage], sections: list[Section]) -> list[Passage]:
    """Attach passages to the section (or part) containing their first line; group the rows
    of long tables and the items of long lists (``passages.group_long_runs``); window long
    passages, so none exceeds ``MAX_PASSAGE_CHARS`` characters."""
    starts = [s.start_line for s in sections]
    out: list[Passage] = []
    counters: dict[int, int] = {}
    placed = [(bisect_right(starts, rp.start_line) - 1, rp) for rp in raw]
    for idx, rp in group_long_runs([(i, rp) for i, rp in placed if i >= 0], MAX_PASSAGE_CHARS):
        for text, a, b in split_window(rp.text, rp.start_line, rp.end_line, MAX_PASSAGE_CHARS):
            if not text.strip():
                continue
            k = counters.get(idx, 0)
            counters[idx] = k + 1
            out.append(Passage(idx, k, rp.kind, text, a, b, rp.lang))
    return out

