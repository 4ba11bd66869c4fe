"""markdown-it's nesting limit without silent loss of text.

markdown-it stops block parsing when containers (block quotes, lists: a list level costs two)
nest ``maxNesting`` deep, and *skips the rest of the enclosing range*: for a list that is the
rest of the file, including later headings. We raise the limit to :data:`MAX_NESTING` (49
list levels or 99 quote levels parse normally; markdown-it's work grows with depth x lines,
about 4 s for 8,000 lines quoted 100 deep here, and Python's recursion limit is near 1,000
levels) and record every place the limit is still hit (:func:`record_cuts`). :func:`parse_without_cuts` then blanks each too-deep run of lines in
the parse copy only (line numbers do not move, section text stays the source), reparses, and
returns the run's text as a plain passage, so every word is still indexed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .passages import RawPassage

#: markdown-it ``maxNesting`` (the CommonMark preset's 20 allows only 9 list levels).
MAX_NESTING = 100
_CUTS = "markdown_memory_nesting_cuts"
_QUOTES = re.compile(r"^[ \t]*(?:>[ \t]?)*")
_MARKER = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+")
# Each reparse blanks at least one non-blank line; past this many a run takes the rest.
_MAX_REPARSES = 20


def record_cuts(md: MarkdownIt) -> MarkdownIt:
    """Make ``md`` note, in the parse ``env``, each ``(line, end)`` (0-based) where block
    parsing gives up because of ``maxNesting``. Returns ``md``."""
    original = md.block.tokenize

    def tokenize(state: Any, start_line: int, end_line: int) -> None:
        if state.level >= state.md.options.maxNesting:
            line = state.skipEmptyLines(start_line)
            if line < end_line and state.sCount[line] >= state.blkIndent:
                state.env.setdefault(_CUTS, []).append((line, end_line))
        original(state, start_line, end_line)

    md.block.tokenize = tokenize  # type: ignore[method-assign,assignment]
    return md


def _depth(line: str) -> tuple[int, int]:
    """(quote markers, indentation after them) of a source line."""
    prefix = _QUOTES.match(line)
    assert prefix is not None
    quotes = prefix.group(0).count(">")
    rest = line[prefix.end():] if quotes else line
    return quotes, len(rest.expandtabs(4)) - len(rest.expandtabs(4).lstrip())


def _run_end(lines: list[str], start: int, end: int) -> int:
    """End (exclusive) of the too-deep run opening at ``start``: the following lines that are
    blank or nested at least as deep, within ``end``."""
    quotes, indent = _depth(lines[start])
    j = start + 1
    while j < end:
        if lines[j].strip():
            q, i = _depth(lines[j])
            if q < quotes or (q == quotes and i < indent):
                break
        j += 1
    while j - 1 > start and not lines[j - 1].strip():
        j -= 1
    return j


def _plain(lines: list[str]) -> str:
    out = []
    for line in lines:
        body = line[_QUOTES.match(line).end():].strip()  # type: ignore[union-attr]
        body = _MARKER.sub("", body)
        if body:
            out.append(body)
    return "\n".join(out)


def parse_without_cuts(
    parse: Callable[[str, dict[str, Any]], list[Token]],
    parse_lines: list[str],
    original: list[str],
    warnings: list[str],
    passages: list[RawPassage],
    env_out: dict[str, Any] | None = None,
) -> list[Token]:
    """Tokens of ``parse_lines`` (``parse(text, env)``) with every run markdown-it would skip
    for nesting blanked in ``parse_lines`` (in place); each run's text (from ``original``)
    is appended to ``passages`` and named in ``warnings``. ``env_out`` (when given) receives
    the returned parse's env: its ``references`` are the link reference definitions."""
    for attempt in range(_MAX_REPARSES + 1):
        env: dict[str, Any] = {}
        tokens = parse("\n".join(parse_lines), env)
        cuts = env.get(_CUTS, [])
        if not cuts:
            if env_out is not None:
                env_out.update(env)
            return tokens
        done = 0
        for start, end in sorted(cuts):
            if start < done:
                continue
            stop = len(parse_lines) if attempt == _MAX_REPARSES else _run_end(parse_lines, start, end)
            text = _plain(original[start:stop])
            if text:
                passages.append(RawPassage("paragraph", text, start + 1, stop))
            for k in range(start, stop):
                parse_lines[k] = ""
            done = stop
            warnings.append(
                f"{f'lines {start + 1}-{stop}' if stop > start + 1 else f'line {stop}'} nest more than {MAX_NESTING // 2 - 1} lists or"
                f" {MAX_NESTING - 1} block quotes deep; indexed as plain text"
            )
    env = {}
    tokens = parse("\n".join(parse_lines), env)
    if env_out is not None:
        env_out.update(env)
    return tokens
