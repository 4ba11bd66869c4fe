"""The links a document's sections hold, found with markdown-it's inline parser.

Forms: wikilinks ``[[note]]``, ``[[note|label]]`` (Dendron writes ``[[label|note]]``: which
side is the target is decided when links are resolved, ``reading/links.py``),
``[[note#Heading#Sub]]``, ``[[note#^block-id]]``, embeds ``![[note]]``, and Markdown links
``[text](dest)`` / ``![alt](dest.md)`` whose destination is a relative path (or only a
``#fragment``): ``http:``, ``mailto:`` and other schemes, and images of non-Markdown files,
are not links between documents. All CommonMark forms count: inline ``[t](dest)`` and the
reference forms ``[t][ref]``, ``[ref][]`` and ``[ref]`` with a ``[ref]: dest`` definition
anywhere in the document (labels match case-insensitively): markdown-it resolves them in its
token stream from the parse's ``env["references"]``. Bracket syntax that is not a link stays text:
footnotes ``[^id]`` (defined or not), task boxes, ``[!NOTE]`` alerts, ``[@key]`` citations and
shortcut references with no definition (case 060).

Only inline text is looked at (paragraphs, headings, table cells, list items, quotes), so code
spans, fenced and indented code, math (``$…$``, ``$$…$$``) and HTML blocks never yield a link:
markdown-it's own code-span rule runs before the wikilink rule at every position. A wikilink
never spans lines or holds ``[``.

The same walk over the inline tokens gives the document's inline tags (``vault.token_tags``:
the vault's rules, headings included).

Block ids: a line of inline text ending in `` ^id`` (Obsidian's block reference target) names
that block; ``[[note#^id]]`` resolves to the section holding it.

Every link keeps ``raw``, the text as written in the section (``[[a#b|c]]``; for a Markdown
link its destination as markdown-it reads it, without ``<…>``; for a reference-style link the
link as written, ``[text][ref]``), and the 1-based line it sits on.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from .nesting import MAX_NESTING
from .vault import token_tags

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MARKDOWN_EXT = re.compile(r"\.(?:md|markdown|mdx)$", re.I)
_OTHER_EXT = re.compile(r"\.[A-Za-z0-9]{1,5}$")
#: Files a wikilink embeds that are not notes (``![[diagram.png]]``): not links between documents.
_ASSET_EXT = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|avif|ico|pdf|mp3|mp4|m4a|wav|ogg|webm|mov|mkv)$", re.I)
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9][A-Za-z0-9_-]*)\s*$")
_TABLE_PIPE = "\\|"  # a pipe inside a table cell is written escaped: [[note\|label]]
#: ``{#id}`` at the end of a heading line (MkDocs/Pandoc attribute lists: ``{#id .cls}``, ``{: #id}``)
_HEADING_ID = re.compile(r"^#{1,6}\s.*\{:?\s*(?:[.\w-]+\s+)*#([\w.:-]+)[^}]*\}\s*#*\s*$")
#: ``<a name="x">`` / ``<a id="x">`` (HTML anchors docs write before a heading or in a paragraph)
_HTML_ANCHOR = re.compile(r"""<a\s[^>]*?\b(?:name|id)\s*=\s*["']?([^"'\s>]+)""", re.I)


@dataclass(frozen=True)
class RawLink:
    """One link as written. ``kind``: ``wikilink`` | ``embed`` | ``markdown``; ``first`` the
    text before ``|`` (a Markdown link's destination), ``second`` the text after it or None;
    ``section``: index into ``ParsedDocument.sections``; ``line``: 1-based."""

    kind: str
    raw: str
    first: str
    second: str | None
    section: int
    line: int


def _wikilink(state: StateInline, silent: bool) -> bool:
    """markdown-it inline rule: ``[[...]]`` or ``![[...]]`` on one line -> a ``wikilink`` token
    (``meta``: inner text, embed flag)."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    start = pos + 1 if embed else pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2)
    if end < 0:
        return False
    inner = src[start + 2 : end]
    if not inner.strip() or "\n" in inner or "[" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = src[pos : end + 2]
        token.meta = {"inner": inner, "embed": embed}
    state.pos = end + 2
    return True


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING}).enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "wikilink", _wikilink)
    # ``[^id]`` is a footnote reference whether or not its note is defined, never a link (case 060)
    md.use(footnote_plugin, move_to_end=False, always_match_refs=True)
    # math spans are tokens of their own (pandoc's rule: no space inside the dollars, no digit
    # after the closing one, so "$5 and $6" stays text): neither tags nor links are read there
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]  # keep the destination as written
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


_MD = _markdown()


def anchor_ids(section_text: str) -> list[str]:
    """The explicit anchors a section defines, in order: a ``{#id}`` attribute on its heading
    line (the first line) and every ``<a name=…>`` / ``<a id=…>`` in its text. Fragments name
    them besides the heading slugs (``reading/links.py``)."""
    first = section_text.partition("\n")[0]
    heading = _HEADING_ID.match(first.strip())
    found = [heading.group(1)] if heading else []
    if "<" in section_text:
        found += _HTML_ANCHOR.findall(section_text)
    return found


def is_document_destination(dest: str) -> bool:
    """A Markdown link destination that may name a document of the root: relative, no URL
    scheme, not protocol-relative, and a Markdown file, a name without extension or only a
    ``#fragment``."""
    text = dest.strip()
    if not text or text.startswith("//") or _SCHEME.match(text):
        return False
    path = text.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    return not path or bool(_MARKDOWN_EXT.search(path)) or not _OTHER_EXT.search(path)


def _reference_as_written(children: list[Token], at: int, content: str) -> str | None:
    """The text of the reference-style link opened by ``children[at]`` as written in
    ``content`` (``[text][ref]``, ``[ref][]``, ``[ref]``), or None when it cannot be found
    (markup inside the link text)."""
    text = ""
    for tok in children[at + 1 :]:
        if tok.type == "link_close":
            break
        text += tok.content if tok.type == "text" else "\x00"
    if "\x00" in text:
        return None
    m = re.search(r"\[" + re.escape(text) + r"\](?:\[[^\]\n]*\])?", content)
    return m.group(0) if m else None


def _from_tokens(children: list[Token], content: str, section: int, line: int, out: list[RawLink]) -> None:
    for at, tok in enumerate(children):
        if tok.type == "wikilink":
            inner = tok.meta["inner"]
            first, sep, rest = inner.partition(_TABLE_PIPE if _TABLE_PIPE in inner else "|")
            if _ASSET_EXT.search(first.split("#", 1)[0].strip()):
                continue
            out.append(RawLink("embed" if tok.meta["embed"] else "wikilink", tok.content, first.strip(),
                               rest.strip() if sep else None, section, line))
        elif tok.type in ("link_open", "image"):
            dest = str(tok.attrs.get("href" if tok.type == "link_open" else "src") or "")
            if not is_document_destination(dest):
                continue
            if tok.type == "image" and not _MARKDOWN_EXT.search(dest.split("#", 1)[0]):
                continue
            raw = dest if dest in content else dest.strip()
            if dest not in content and tok.type == "link_open":  # a reference: its destination is elsewhere
                raw = _reference_as_written(children, at, content) or raw
            out.append(RawLink("embed" if tok.type == "image" else "markdown", raw, dest, None, section, line))
        if tok.children:
            _from_tokens(tok.children, content, section, line, out)


def _as_written(link: RawLink, source: str, seen: dict[str, int]) -> RawLink:
    """``link`` with ``raw`` spelled as in ``source`` (the block's lines from ``link.line``;
    markdown-it reads a table cell's ``\\|`` as ``|``) and ``line`` the line it is on.
    ``seen``: where the search for each spelling goes on (a link written twice in a block)."""
    raw = link.raw if link.raw in source else link.raw.replace("|", _TABLE_PIPE)
    at = source.find(raw, seen.get(raw, 0))
    if at < 0:
        return link
    seen[raw] = at + len(raw)
    return RawLink(link.kind, raw, link.first, link.second, link.section, link.line + source.count("\n", 0, at))


def front_matter_links(lines: list[str], end_line: int) -> list[RawLink]:
    """The wikilinks in a note's front matter (Obsidian properties: ``up: "[[Parent]]"``,
    ``related: ["[[A]]", "[[B|b]]"]``), each on its own line of the block (``lines``: the file's
    lines; ``end_line``: the closing delimiter's 1-based line, 0 for none). They belong to the
    first section (index 0). Read with the same wikilink rule as the body; comment lines skipped."""
    out: list[RawLink] = []
    for i in range(1, max(end_line - 1, 1)):
        text = lines[i]
        if "[[" not in text or text.lstrip().startswith("#"):
            continue
        children: list[Token] = []
        _MD.inline.parse(text, _MD, {}, children)
        out.extend(link for link in _links_of(children, text, 0, i + 1) if link.kind != "markdown")
    return out


def _links_of(children: list[Token], content: str, section: int, line: int) -> list[RawLink]:
    found: list[RawLink] = []
    _from_tokens(children, content, section, line, found)
    return found


def text_tags(text: str) -> list[str]:
    """The inline tags of ``text`` read as one block's inline content (``vault.token_tags``):
    for text kept out of the block parse (runs nested past markdown-it's limit)."""
    if "#" not in text:
        return []
    children: list[Token] = []
    _MD.inline.parse(text, _MD, {}, children)
    return token_tags(children)


class InlineFacts(NamedTuple):
    """What a document's inline text holds: ``links``; ``block_ids`` as ``(section index, id)``;
    ``tags`` as ``(tag as written, section index)`` in document order."""

    links: list[RawLink]
    block_ids: list[tuple[int, str]]
    tags: list[tuple[str, int]]


def _may_link(content: str, env: dict[str, Any]) -> bool:
    """False when ``content`` cannot hold a link: the inline parse is skipped."""
    return "[[" in content or "](" in content or (bool(env.get("references")) and "]" in content)


def extract_inline(tokens: list[Token], section_starts: list[int], lines: list[str],
                   env: dict[str, Any] | None = None) -> InlineFacts:
    """Links, block ids and inline tags of a parsed document. ``tokens``: its block tokens
    (inline tokens carry ``content``, children need not be parsed); ``section_starts``: each
    section's 1-based first line, in order; ``lines``: the file's lines; ``env``: the block
    parse's env (its ``references`` resolve reference-style links). Never raises on any input."""
    env = env or {}
    facts = InlineFacts([], [], [])
    for tok in tokens:
        if tok.type != "inline" or tok.map is None or not tok.content:
            continue
        line = tok.map[0] + 1
        section = bisect_right(section_starts, line) - 1
        if section < 0:
            continue  # front matter
        content = tok.content
        if "^" in content:
            for text_line in content.split("\n"):
                m = _BLOCK_ID.search(text_line)
                if m:
                    facts.block_ids.append((section, m.group(1)))
        links, tagged = _may_link(content, env), "#" in content
        if not links and not tagged:  # skip the inline parse
            continue
        children: list[Token] = []
        _MD.inline.parse(content, _MD, dict(env), children)
        if tagged:
            facts.tags.extend((tag, section) for tag in token_tags(children))
        if links:
            found = _links_of(children, content, section, line)
            source = "\n".join(lines[tok.map[0] : tok.map[1]])
            seen: dict[str, int] = {}
            facts.links.extend(_as_written(link, source, seen) for link in found)
    return facts
