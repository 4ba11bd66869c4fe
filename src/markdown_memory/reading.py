"""How stored sections become the answer of ``Engine.read``: a section's verbatim lines, and
paging (line numbers are 1-based lines of the file; a cursor is a 0-based index into the text).
"""

from __future__ import annotations

from typing import Any, Sequence

from .errors import QueryError
from .tokens import count_tokens


def verbatim_lines(picked: Sequence[Sequence[Any]]) -> list[str]:
    """The file's lines from the first picked section's start to the last one's end. A
    section's text is exactly its lines; the parser trims blank lines from a section's end, so
    the gaps between consecutive sections are blank lines and are put back here (without them,
    joined subsections lose those lines and every later line number drifts; a gap line of only
    spaces comes back empty, which Markdown reads the same). ``picked`` rows
    are (heading_path, base_path, level, part, start_line, end_line, text, ordinal)."""
    lines: list[str] = []
    previous_end: int | None = None
    for row in picked:
        if previous_end is not None:
            lines.extend([""] * max(0, row[4] - previous_end - 1))
        lines.extend(row[6].split("\n"))
        previous_end = row[5]
    return lines


def page(lines: list[str], cursor: int, page_tokens: int, what: str) -> tuple[list[str], int]:
    """One page of ``lines`` from index ``cursor``: as many whole lines as fit ``page_tokens``
    (at least one). Returns (the page's lines, the index after its last line). ``what`` names
    the text for the error ("section 'A > B' of x.md"). Raises QueryError for a cursor outside
    0..len(lines)-1 (a negative one, or one past the end: a cursor is only ever a
    ``next_cursor`` of an earlier answer, or 0)."""
    if cursor < 0 or cursor >= len(lines):
        raise QueryError(
            f"cursor {cursor} is outside the {what}: it has {len(lines)} line(s), so valid cursors are "
            f"0..{len(lines) - 1}; pass the next_cursor of the previous answer, or no cursor to read from the start"
        )
    out: list[str] = []
    used = 0
    index = cursor
    while index < len(lines):
        cost = count_tokens(lines[index]) + 1
        if out and used + cost > page_tokens:
            break
        out.append(lines[index])
        used += cost
        index += 1
    return out, index
