"""How stored sections become the answers of ``Engine.outline`` and ``Engine.read``: the
heading tree with its line ranges and token counts, a section's verbatim lines, and paging.

Line numbers are 1-based lines of the file. A heading's own range (``start_line`` ..
``end_line``) is its text up to the next heading of any level, which is exactly what
``read_section`` (and a search hit) returns; ``end_line_with_children`` also covers its
subsections, as ``tokens_with_children`` does for tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import QueryError, SectionNotFoundError
from ..markdown.parse import PREAMBLE
from ..models import OutlineHeading, Preamble
from ..text import count_tokens
from .resolve import resolve_heading

if TYPE_CHECKING:  # pragma: no cover
    from ..store import SectionRecord


def outline_nodes(rows: Sequence[SectionRecord]) -> tuple[Preamble | None, list[OutlineHeading]]:
    """(preamble, headings) of one document from its sections in file order
    (``Store.sections_of``); the ``(Part n)`` pieces of a long section are one heading, with
    ``parts`` their number. ``end_line`` and ``tokens`` are a heading's own text (what
    read_section returns), the ``_with_children`` fields add every subsection. The preamble
    (text before the first heading) is None when there is none."""
    heads: list[OutlineHeading] = []
    index: dict[str, int] = {}  # base_path -> position in heads
    preamble: Preamble | None = None
    for r in rows:
        if r.level == 0:
            preamble = (Preamble(r.base_path, r.start_line, r.end_line, r.tokens) if preamble is None
                        else replace(preamble, end_line=r.end_line, tokens=preamble.tokens + r.tokens))
            continue
        at = index.get(r.base_path)
        if at is None:
            index[r.base_path] = len(heads)
            heads.append(OutlineHeading(r.base_path, r.title, r.level, r.start_line, r.end_line, r.end_line,
                                        r.tokens, 0, r.part or None))
        else:
            h = heads[at]
            heads[at] = replace(h, end_line=r.end_line, end_line_with_children=r.end_line, tokens=h.tokens + r.tokens,
                                parts=r.part or h.parts)
    # the _with_children fields: own values plus every following heading of a deeper level
    out = []
    for i, h in enumerate(heads):
        total, last = h.tokens, h.end_line
        for later in heads[i + 1 :]:
            if later.level <= h.level:
                break
            total += later.tokens
            last = max(last, later.end_line)
        out.append(replace(h, tokens_with_children=total, end_line_with_children=last))
    return preamble, out


def verbatim_lines(picked: Sequence[SectionRecord]) -> list[str]:
    """The file's lines from the first picked section's start to the last one's end. A
    section's text is exactly its lines; the parser trims blank lines from a section's end, so
    the gaps between consecutive sections are blank lines and are put back here (without them,
    joined subsections lose those lines and every later line number drifts; a gap line of only
    spaces comes back empty, which Markdown reads the same). ``picked``: consecutive sections
    of one document in file order."""
    lines: list[str] = []
    previous_end: int | None = None
    for row in picked:
        if previous_end is not None:
            lines.extend([""] * max(0, row.start_line - previous_end - 1))
        lines.extend(row.text.split("\n"))
        previous_end = row.end_line
    return lines


#: A line longer than this many characters (a minified bundle, a base64 blob) is paged in
#: pieces of this many: a page never carries more than one piece beyond its token budget.
LINE_PIECE_CHARS = 2_000


def page_units(lines: list[str]) -> list[tuple[str, int, bool]]:
    """What a cursor counts: each line of ``lines``, a line longer than
    :data:`LINE_PIECE_CHARS` as consecutive pieces of that size. Items are ``(text, index of
    its line in lines, True when it continues the previous item's line)``; for text without
    such lines the items are the lines, so a cursor is a line index."""
    units: list[tuple[str, int, bool]] = []
    for k, line in enumerate(lines):
        if len(line) <= LINE_PIECE_CHARS:
            units.append((line, k, False))
            continue
        for pos in range(0, len(line), LINE_PIECE_CHARS):
            units.append((line[pos : pos + LINE_PIECE_CHARS], k, pos > 0))
    return units


def page(lines: list[str], cursor: int, page_tokens: int, what: str) -> tuple[str, int, int, int | None]:
    """One page of ``lines`` from unit ``cursor`` (see :func:`page_units`): as many whole units
    as fit ``page_tokens`` (at least one). Returns (the page's text, the index in ``lines`` of
    its first and of its last line, the next cursor or None after the last unit). ``what``
    names the text for the error ("section 'A > B' of x.md"). Raises QueryError for a cursor
    outside the units (a negative one, or one past the end: a cursor is only ever a
    ``next_cursor`` of an earlier answer, or 0)."""
    units = page_units(lines)
    if cursor < 0 or cursor >= len(units):
        raise QueryError(
            f"cursor {cursor} is outside the {what}: it has {len(units)} line(s), so valid cursors are "
            f"0..{len(units) - 1}; pass the next_cursor of the previous answer, or no cursor to read from the start"
        )
    out: list[str] = []
    used = 0
    index = cursor
    while index < len(units):
        text, _line, continues = units[index]
        cost = count_tokens(text) + (0 if continues else 1)
        if out and used + cost > page_tokens:
            break
        if continues and out:
            out[-1] += text
        else:
            out.append(text)
        used += cost
        index += 1
    return "\n".join(out), units[cursor][1], units[index - 1][1], index if index < len(units) else None


def pick_sections(rows: Sequence[SectionRecord], heading_path: str, rel: str,
                  include_subsections: bool) -> tuple[str, list[SectionRecord]]:
    """The breadcrumb ``heading_path`` resolves to in document ``rel`` and its rows in order
    (all ``(Part n)`` pieces of a base path; with ``include_subsections`` its descendants too).
    ``rows``: every section of the document by ordinal (``Store.sections_of``); an empty request picks the first section (the preamble when
    there is one), ``(preamble)`` the preamble. Raises
    SectionNotFoundError (with candidates, see ``resolve.resolve_heading``)."""
    available = list(dict.fromkeys([r.base_path for r in rows] + [r.heading_path for r in rows if r.part]))
    if rows and (not heading_path.strip() or (heading_path.strip() == PREAMBLE.lower() and rows[0].level == 0)):
        wanted = rows[0].base_path
    else:
        wanted = resolve_heading(heading_path, available, rel)
    picked = [r for r in rows if r.heading_path == wanted] or [r for r in rows if r.base_path == wanted]
    if not picked:
        raise SectionNotFoundError(f"no section {heading_path!r} in {rel}")
    if include_subsections and picked[0].level > 0:
        level = picked[0].level
        last_ordinal = picked[-1].ordinal
        for r in rows:
            if r.ordinal <= last_ordinal:
                continue
            if r.level <= level and r.base_path != wanted:
                break
            picked.append(r)
    return wanted, picked
