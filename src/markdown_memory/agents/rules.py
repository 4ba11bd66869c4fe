"""The agent rules block: the one text ``setup --rules`` puts into a project's CLAUDE.md (Claude
Code) or AGENTS.md (Codex), between two HTML comment markers so a later run finds and replaces
it in place and ``--remove`` takes it out. This repository's own CLAUDE.md and AGENTS.md carry
the same block (``tests/test_agent_rules.py`` checks all three are identical)."""

from __future__ import annotations

from .. import messages_setup
from ..errors import ConfigError

START = "<!-- agent-rules:start -->"
END = "<!-- agent-rules:end -->"

RULES = """<!-- agent-rules:start -->
## Rules for agents reading the docs through markdown-memory

1. Search first: call `search_docs` with the question or the exact identifier. Hits carry
   `file_path`, `heading_path` and the section text (`content`) until `max_tokens` is spent;
   later hits are pointers with a short `preview`. A pointer with `already_sent: true` is a
   section whose text you already received in this session (`resend: true` sends it again).
2. To see how a document is organised, call `get_document_outline` (headings and token counts,
   no bodies).
3. Read one section with `read_section(file_path, heading_path)`; pass `cursor=next_cursor`
   when the answer says there is more. Use `include_subsections` only when you need the children.
   A link target copied from a note (`note#Heading`, `[[note#Heading]]`) works as `file_path` alone.
   `get_links(file_path)` lists a document's outgoing links and backlinks, each with its section.
4. Never read or `cat` whole Markdown files under the docs root; the index exists so you read
   one section instead.
5. Check `index_status` in search answers: `keyword_only: true` means search on exact words;
   `indexing: true` means results may be incomplete; a non-null `message` says what to do
   (for example call `index_directory` when background indexing is off). Edited, new and
   deleted files are picked up before each answer; a hit with `stale` comes from a file changed
   since it was indexed (its text may be outdated). Use `list_documents` to see what is indexed.
6. `find_drift` lists sections naming CLI flags, environment variables, paths or functions the
   code no longer has; treat those sections as possibly outdated.
<!-- agent-rules:end -->"""


def _marker_lines(text: str) -> tuple[list[int], list[int]]:
    """Character offsets of the START and END markers that stand on a line of their own outside
    a fenced code block: the only places setup writes them. A marker quoted in prose or in a
    code span (docs describing the block) or shown in a fence is text, not a marker."""
    starts: list[int] = []
    ends: list[int] = []
    fence = ""
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif stripped == START:
            starts.append(offset + line.index(START))
        elif stripped == END:
            ends.append(offset + line.index(END))
        offset += len(line) + 1
    return starts, ends


def _span(text: str, where: str) -> tuple[int, int] | None:
    """(start, end) character offsets of the block in ``text``, None when it has none. Raises
    ConfigError when the markers are unbalanced or repeated (a hand edit setup must not guess).
    Markers count on lines of their own only (``_marker_lines``)."""
    if START not in text and END not in text:
        return None
    starts, ends = _marker_lines(text)
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ConfigError(messages_setup.rules_markers_broken(where, START, END))
    return starts[0], ends[0] + len(END)


def blank_rules(text: str) -> tuple[str, tuple[int, int] | None]:
    """``text`` with the lines of its rules block made empty (so the index never serves the
    tool's own instructions, and every other line keeps its number), and the block's 1-based
    (first, last) line numbers; ``(text, None)`` when it holds no well-formed block (broken
    markers are setup's concern: the text is indexed as written)."""
    try:
        span = _span(text, "")
    except ConfigError:
        return text, None
    if span is None:
        return text, None
    first = text.count("\n", 0, span[0])
    last = first + text.count("\n", span[0], span[1])
    lines = text.split("\n")
    lines[first: last + 1] = [""] * (last + 1 - first)
    return "\n".join(lines), (first + 1, last + 1)


def with_rules(text: str | None, where: str) -> str:
    """``text`` (None: no file yet) with the rules block: an existing block replaced in place,
    else the block appended after a blank line. Raises ConfigError for broken markers."""
    if not text or not text.strip():
        return RULES + "\n"
    span = _span(text, where)
    if span is not None:
        return text[: span[0]] + RULES + text[span[1]:]
    return text.rstrip("\n") + "\n\n" + RULES + "\n"


def without_rules(text: str | None, where: str) -> str | None:
    """``text`` without the rules block (and the blank line setup put before it); None when
    nothing else is left (the file setup created goes again). Raises ConfigError for broken
    markers."""
    if text is None:
        return None
    span = _span(text, where)
    if span is None:
        return text
    head, tail = text[: span[0]], text[span[1]:]
    if tail.startswith("\n"):
        tail = tail[1:]
    if head.endswith("\n\n"):
        head = head[:-1]
    rest = head + tail
    if not rest.strip():
        return None
    return rest
