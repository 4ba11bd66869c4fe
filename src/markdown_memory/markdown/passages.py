"""Passage extraction from markdown-it-py block tokens.

A passage is what gets embedded: each paragraph, each top-level list item (its nested items
included), each table body row rendered ``Header: cell; Header: cell``, each code block, and
the visible text of HTML blocks, at any nesting depth (block quotes, list items, callouts).
Bounds (case 029): a run of more than :data:`MAX_RUN_PASSAGES` rows or items is stored as
passages of several rows (:func:`group_long_runs`); no passage exceeds
:data:`MAX_PASSAGE_CHARS` (:func:`split_window`, linear even for a 3 MB line without spaces);
one section is embedded as at most :data:`MAX_EMBED_TEXTS` texts (:func:`pack_runs`).
Headings nested inside containers are passages too (they are not section headings).

Text comes from the source (markdown-it's inline ``content`` or source lines), never from
rendered HTML, so backslashes, pipes and punctuation survive byte for byte.

:func:`pack_runs` groups adjacent small paragraphs, list items and table rows of one section so
that the indexer embeds each run as one text (each passage stays its own row for display and
lines): on the eval corpus 31% of passages were under 40 characters, and each one cost a model
call plus its breadcrumb. :func:`embed_body` is the part of a passage that is embedded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from ..text import HTML_TAG
from .vault import code_language

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.S | re.I)
_JSX_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?/?>")
_ESM = re.compile(
    r"^(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?['\"]|export\s+(?:const|let|var|function|default|async|class)\b)"
)
_CONTAINER_PREFIX = re.compile(r"^\s*(?:>\s?)*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass
class RawPassage:
    kind: str
    text: str
    start_line: int  # 1-based inclusive
    end_line: int
    lang: str = ""  # a fenced code block's language (``vault.code_language``), else ""


def _strip_html(block: str) -> str:
    text = _COMMENT.sub(" ", block)
    text = _SCRIPT.sub(" ", text)
    text = HTML_TAG.sub(" ", text)
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


def _split_row(line: str) -> list[str]:
    """Cells of a table source line, split on pipes that are neither escaped nor inside a
    code span. GFM splits inside code spans too and then drops cells beyond the header count;
    an index must not lose text, so a code span stays one cell and extra cells are kept."""
    body = _CONTAINER_PREFIX.sub("", line).strip()
    cells: list[str] = []
    current: list[str] = []
    escaped = False
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "`" and not escaped:
            run = len(body[i:]) - len(body[i:].lstrip("`"))
            ticks = body[i : i + run]
            close = _closing_ticks(body, i + run, ticks)
            if close >= 0:
                current.append(body[i : close + run])
                i = close + run
                continue
            current.append(ticks)
            i += run
            continue
        if ch == "|" and not escaped:
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
        escaped = ch == "\\" and not escaped
        i += 1
    cells.append("".join(current))
    if body.startswith("|"):
        cells = cells[1:]
    if body.endswith("|") and not body.endswith("\\|") and cells and len(cells) > 1:
        cells = cells[:-1]
    return [c.strip() for c in cells]


def _closing_ticks(body: str, start: int, ticks: str) -> int:
    """Index of the backtick run equal to ``ticks`` (exactly) at or after ``start``, or -1."""
    pos = start
    while True:
        pos = body.find(ticks, pos)
        if pos < 0:
            return -1
        end = pos + len(ticks)
        if (pos == 0 or body[pos - 1] != "`") and (end >= len(body) or body[end] != "`"):
            return pos
        pos = end
        while pos < len(body) and body[pos] == "`":
            pos += 1


def _table_passages(tokens: list[Token], i: int, lines: list[str]) -> tuple[list[RawPassage], int]:
    """Row passages for the table starting at ``tokens[i]``; returns (passages, index after)."""
    start, _ = tokens[i].map or (0, 0)
    headers = _split_row(lines[start]) if start < len(lines) else []
    out: list[RawPassage] = []
    j = i
    in_body = False
    while j < len(tokens) and tokens[j].type != "table_close":
        tok = tokens[j]
        if tok.type == "tbody_open":
            in_body = True
        elif tok.type == "tr_open" and in_body and tok.map is not None:
            row_line = tok.map[0]
            cells = _split_row(lines[row_line])
            parts = []
            for k, cell in enumerate(cells):
                if not cell:
                    continue
                head = headers[k] if k < len(headers) else ""
                parts.append(f"{head}: {cell}" if head else cell)
            if parts:
                out.append(RawPassage("table_row", "; ".join(parts), row_line + 1, row_line + 1))
        j += 1
    if not any(True for _ in out) and headers:
        out.append(RawPassage("table_row", "; ".join(h for h in headers if h), start + 1, start + 1))
    return out, j + 1


def extract_passages(tokens: list[Token], lines: list[str], *, mdx: bool = False) -> list[RawPassage]:
    """All passages of a token stream, in document order. Level-0 headings are skipped
    (they are section headings, carried by the breadcrumb)."""
    out: list[RawPassage] = []
    item_depth = 0
    item: RawPassage | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "table_open":
            rows, i = _table_passages(tokens, i, lines)
            out.extend(rows)
            continue
        if kind == "list_item_open":
            if item_depth == 0 and tok.map is not None:
                item = RawPassage("list_item", "", tok.map[0] + 1, tok.map[1])
            item_depth += 1
        elif kind == "list_item_close":
            item_depth -= 1
            if item_depth == 0 and item is not None:
                if item.text.strip():
                    out.append(item)
                item = None
        elif kind == "inline":
            parent = tokens[i - 1] if i else None
            if parent is not None and parent.type == "heading_open" and parent.level == 0:
                i += 1
                continue
            text = tok.content
            if mdx:
                text = _JSX_TAG.sub(" ", text).strip()
            if mdx and parent is not None and parent.level == 0 and _ESM.match(text):
                i += 1
                continue
            if text.strip():
                ptype = "heading" if parent is not None and parent.type == "heading_open" else "paragraph"
                if item is not None:
                    item.text = f"{item.text}\n{text}" if item.text else text
                elif parent is not None and parent.map is not None:
                    out.append(RawPassage(ptype, text, parent.map[0] + 1, parent.map[1]))
        elif kind in ("fence", "code_block") and tok.map is not None:
            body = tok.content.rstrip("\n")
            if body.strip():
                first = tok.map[0] + (2 if kind == "fence" else 1)
                last = max(first, tok.map[1] - (1 if kind == "fence" else 0))
                last = min(last, tok.map[1])
                out.append(RawPassage("code", body, first, last, code_language(tok.info) if kind == "fence" else ""))
        elif kind == "html_block" and tok.map is not None:
            text = _strip_html(tok.content)
            if text:
                if item is not None:
                    item.text = f"{item.text}\n{text}" if item.text else text
                else:
                    out.append(RawPassage("html", text, tok.map[0] + 1, tok.map[1]))
        i += 1
    for rp in out:  # block maps may include trailing blank lines (list items, HTML blocks)
        while rp.end_line > rp.start_line and rp.end_line <= len(lines) and not lines[rp.end_line - 1].strip():
            rp.end_line -= 1
    return out


#: No passage is longer than this many characters: longer ones are split into windows
#: (``split_window``), so no stored passage and no embedding input carries megabytes.
MAX_PASSAGE_CHARS = 600
#: A run of more than this many adjacent table rows (or top-level list items) of one section is
#: stored as passages of several rows each (``group_long_runs``): a 40,000-row table makes
#: ~3,000 passages, not 40,000. Shorter tables keep one passage per row (a hit names its row).
MAX_RUN_PASSAGES = 64
#: Kinds whose long runs are grouped.
GROUPED_KINDS = frozenset({"table_row", "list_item"})


def group_long_runs(placed: list[tuple[int, RawPassage]], max_chars: int) -> list[tuple[int, RawPassage]]:
    """``placed``: ``(section index, passage)`` in document order. Every run of more than
    :data:`MAX_RUN_PASSAGES` passages of one kind in :data:`GROUPED_KINDS`, in one section,
    each starting at most one blank line after the previous one ends, becomes passages that
    join consecutive members with line breaks up to ``max_chars`` characters (a member longer
    than that stays alone, to be windowed). Other passages are returned unchanged. Linear."""
    out: list[tuple[int, RawPassage]] = []
    i = 0
    n = len(placed)
    while i < n:
        idx, first = placed[i]
        j = i + 1
        if first.kind in GROUPED_KINDS:
            while (j < n and placed[j][0] == idx and placed[j][1].kind == first.kind
                   and placed[j - 1][1].end_line < placed[j][1].start_line <= placed[j - 1][1].end_line + 2):
                j += 1
        if j - i <= MAX_RUN_PASSAGES:
            out.extend(placed[i:j])
        else:
            group: list[RawPassage] = []
            size = 0
            for _idx, rp in placed[i:j]:
                if group and size + 1 + len(rp.text) > max_chars:
                    out.append((idx, _joined(group)))
                    group, size = [], 0
                size += (1 if group else 0) + len(rp.text)
                group.append(rp)
            out.append((idx, _joined(group)))
        i = j
    return out


def _joined(group: list[RawPassage]) -> RawPassage:
    if len(group) == 1:
        return group[0]
    return RawPassage(group[0].kind, "\n".join(rp.text for rp in group), group[0].start_line, group[-1].end_line)


#: A packed run of small passages stays at or under this many characters (the window size).
PACK_CHARS = 600
#: Passage kinds that are packed with their neighbours (any mix of them).
PACK_KINDS = frozenset({"list_item", "table_row", "paragraph", "html"})
#: Code blocks are embedded by their first lines only, up to this many characters: identifiers
#: are found by keyword search, and a code window costs ~3x the tokens of prose of its length.
CODE_EMBED_CHARS = 200


def embed_body(kind: str, text: str) -> str:
    """The part of a passage's text that is embedded: all of it, except for code, whose first
    lines up to :data:`CODE_EMBED_CHARS` characters are kept (cut at a line break when one falls
    in the second half, else hard)."""
    if kind != "code" or len(text) <= CODE_EMBED_CHARS:
        return text
    head = text[:CODE_EMBED_CHARS]
    cut = head.rfind("\n")
    return head[:cut] if cut >= CODE_EMBED_CHARS // 2 else head


def pack_runs(items: list[tuple[str, str, int, int]], max_chars: int | None = None) -> list[list[int]]:
    """Group one section's passages, given in order as ``(kind, text, start_line, end_line)``,
    into runs embedded as one text: adjacent passages of :data:`PACK_KINDS` (paragraphs, list
    items, table rows, HTML text) whose texts, joined with line breaks, fit in ``max_chars``
    (default :data:`PACK_CHARS`; 0 = no packing).

    Adjacent means the next one starts after the previous ends and at most one blank line later.
    Returns lists of indices into ``items`` covering every index once, in order; code blocks,
    nested headings and passages too long to join are groups of one, except that at most
    :data:`MAX_EMBED_TEXTS` groups are returned (consecutive groups merged).
    """
    limit = PACK_CHARS if max_chars is None else max_chars
    groups: list[list[int]] = []
    size = 0
    for i, (kind, text, start, _end) in enumerate(items):
        if groups and kind in PACK_KINDS:
            pkind, _, _, pend = items[groups[-1][-1]]
            if pkind in PACK_KINDS and pend < start <= pend + 2 and size + 1 + len(text) <= limit:
                groups[-1].append(i)
                size += 1 + len(text)
                continue
        groups.append([i])
        size = len(text)
    return _at_most(groups, MAX_EMBED_TEXTS)


#: One section (or ``(Part n)`` piece) is embedded as at most this many texts. Parts are cut at
#: ~800 tokens, so only a part that is one huge block (a 40,000-row table, a 3 MB minified line,
#: a pasted log) has more packed runs than this; its runs are then merged into this many
#: consecutive groups, each embedded by the head of its text (``run_text``). Embedding work per
#: part is bounded; keyword search still sees every word.
MAX_EMBED_TEXTS = 32


def _at_most(groups: list[list[int]], limit: int) -> list[list[int]]:
    """``groups`` merged into ``limit`` consecutive groups of near-equal size when there are more."""
    if len(groups) <= limit:
        return groups
    out: list[list[int]] = []
    for k in range(limit):
        merged: list[int] = []
        for group in groups[k * len(groups) // limit : (k + 1) * len(groups) // limit]:
            merged.extend(group)
        out.append(merged)
    return out


def run_text(bodies: list[str]) -> str:
    """The text embedded for one packed run, from its members' ``embed_body`` in order: joined
    with line breaks, at most :data:`MAX_PASSAGE_CHARS` characters (only a run merged by the
    :data:`MAX_EMBED_TEXTS` bound is longer, and is cut)."""
    text = "\n".join(bodies)
    return text if len(text) <= MAX_PASSAGE_CHARS else text[:MAX_PASSAGE_CHARS]


def esm_lines(tokens: list[Token]) -> set[int]:
    """0-based lines of top-level MDX ``import``/``export`` statements (outside code fences)."""
    out: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.type == "paragraph_open" and tok.level == 0 and tok.map is not None and i + 1 < len(tokens):
            if _ESM.match(tokens[i + 1].content):
                out.update(range(tok.map[0], tok.map[1]))
    return out


def split_window(text: str, start_line: int, end_line: int, max_chars: int) -> list[tuple[str, int, int]]:
    """Split ``text`` into windows of at most ``max_chars`` characters, cutting at line, then
    sentence, then word boundaries (a single word longer than the limit is cut hard).

    Returns ``[(window_text, start_line, end_line)]``; line numbers count the line breaks
    before each window. Only whitespace at a cut is dropped, never other characters.
    """
    if len(text) <= max_chars:
        return [(text, start_line, end_line)]
    out: list[tuple[str, int, int]] = []
    buf = ""
    buf_line = line = start_line
    for piece, newline_before in _pieces(text, max_chars):
        if newline_before and (buf or out):
            line += 1
        if buf and len(buf) + 1 + len(piece) > max_chars:
            out.append((buf, buf_line, min(end_line, max(buf_line, line - (1 if newline_before else 0)))))
            buf = ""
        if not buf:
            buf, buf_line = piece, min(line, end_line)
        else:
            buf = f"{buf}{chr(10) if newline_before else ' '}{piece}"
    if buf:
        out.append((buf, buf_line, min(end_line, max(buf_line, line))))
    return out


def _pieces(text: str, max_chars: int) -> list[tuple[str, bool]]:
    """Atomic pieces no longer than max_chars (lines, else sentences, else words, else hard
    slices), each with whether a line break precedes it."""
    out: list[tuple[str, bool]] = []
    for line in text.split("\n"):
        first = True
        pieces: list[str] = []
        if len(line) <= max_chars:
            pieces = [line]
        else:
            for sentence in _SENTENCE_END.split(line):
                if len(sentence) <= max_chars:
                    pieces.append(sentence)
                    continue
                word_buf = ""
                for word in sentence.split(" "):
                    if len(word) > max_chars:
                        if word_buf:
                            pieces.append(word_buf)
                            word_buf = ""
                        slices = _hard_slices(word, max_chars)
                        pieces.extend(slices[:-1])
                        word = slices[-1]
                    if word_buf and len(word_buf) + 1 + len(word) > max_chars:
                        pieces.append(word_buf)
                        word_buf = word
                    else:
                        word_buf = f"{word_buf} {word}" if word_buf else word
                if word_buf:
                    pieces.append(word_buf)
        for piece in pieces:
            out.append((piece, first))
            first = False
    return out


#: everything up to and including the last non-word character (greedy, so it backtracks from the end)
_LAST_BREAK = re.compile(r".*[^\w]", re.S)


def _hard_slices(word: str, max_chars: int) -> list[str]:
    """``word`` (no spaces, longer than ``max_chars``: minified JSON, a hash, a URL) cut into
    slices of at most ``max_chars`` characters that join back to it, each cut just after the
    last non-word character (``,`` ``"`` ``/``...) of its second half when there is one, so
    identifiers stay whole; else hard. Linear in ``len(word)``."""
    out: list[str] = []
    pos = 0
    n = len(word)
    while n - pos > max_chars:
        end = pos + max_chars
        last_break = _LAST_BREAK.match(word, pos + max_chars // 2, end)
        cut = last_break.end() if last_break else end
        out.append(word[pos:cut])
        pos = cut
    out.append(word[pos:])
    return out
