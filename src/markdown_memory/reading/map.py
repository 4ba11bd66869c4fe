"""The docs map: a token-budgeted outline of the whole docs root in the llms.txt form.

``build_map(root_name, rows, max_tokens)`` turns the store's ``document_headings`` rows into
Markdown an agent (or a person pasting it into CLAUDE.md / AGENTS.md, or serving it as
``llms.txt``) reads before its first search::

    # guide

    > 5 Markdown documents (1,234 tokens) ...

    ## ops/

    - [Troubleshooting](ops/troubleshooting.md): 420 tokens; Logs (Levels), Crashes

One ``## folder/`` section per folder holding documents (documents at the top of the root
first, under ``## ./``), one ``- [title](path): note`` line per document: its token count and
its top headings (a document's only top heading is skipped when it is the title, so its
children are the top). When the whole text is over ``max_tokens`` (as ``text.count_tokens``
counts it) the map gives up detail in this order: second-level headings, then every heading,
then one line per folder with its document and token counts, then one line per top-level
folder, and at last folder lines from the end; lines are never cut, and the text says what it
left out. Paths in links are percent-encoded (a space is ``%20``).
"""

from __future__ import annotations

import posixpath
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from .. import messages
from ..store import HeadingRow
from ..text import count_tokens

DEFAULT_MAP_TOKENS = 1500
#: top headings listed per document line; the rest are counted (``+3 more``)
MAX_HEADINGS = 12
#: children listed per top heading at the most detailed level
MAX_CHILDREN = 6


@dataclass(frozen=True)
class _Heading:
    title: str
    children: tuple[str, ...]


@dataclass(frozen=True)
class _Doc:
    path: str
    title: str
    tokens: int
    headings: tuple[_Heading, ...]

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)


@dataclass(frozen=True)
class DocsMap:
    """A rendered map: ``text`` (Markdown, ``tokens`` by ``text.count_tokens``, within
    ``max_tokens``), ``documents`` indexed, ``listed`` of them with a line of their own (the rest
    are counted in folder lines), ``detail`` (``headings``, ``top headings``, ``documents``,
    ``folders``, ``top folders``) and ``left_out`` (what the budget cost, or None)."""

    text: str
    tokens: int
    max_tokens: int
    documents: int
    listed: int
    detail: str
    left_out: str | None

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "tokens": self.tokens, "max_tokens": self.max_tokens,
                "documents": self.documents, "listed": self.listed, "detail": self.detail,
                "left_out": self.left_out}


def _documents(rows: Iterable[HeadingRow]) -> list[_Doc]:
    """Group rows (by path, headings in file order) into documents with a two-level tree."""
    grouped: dict[str, tuple[HeadingRow, list[tuple[int, str]]]] = {}
    for row in rows:
        entry = grouped.setdefault(row.path, (row, []))
        if row.level is not None and row.heading:
            entry[1].append((row.level, row.heading))
    docs = []
    for path, (first, heads) in grouped.items():
        levels = sorted({lvl for lvl, _ in heads})
        if heads and heads[0][1] == first.title and [lvl for lvl, _ in heads].count(levels[0]) == 1:
            heads = heads[1:]  # the title heading: its children are the top
            levels = sorted({lvl for lvl, _ in heads})
        tree: list[tuple[str, list[str]]] = []
        if levels:
            top = levels[0]
            second = levels[1] if len(levels) > 1 else None
            for lvl, title in heads:
                if lvl == top:
                    tree.append((title, []))
                elif lvl == second and tree:
                    tree[-1][1].append(title)
        docs.append(_Doc(path, first.title or posixpath.basename(path), int(first.tokens or 0),
                         tuple(_Heading(t, tuple(c)) for t, c in tree)))
    return docs


def _link_text(text: str) -> str:
    """Text safe inside ``[...]`` on one line."""
    return " ".join(text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").split())


def _link(label: str, path: str) -> str:
    return f"[{_link_text(label)}]({urllib.parse.quote(path)})"


def _clipped(items: list[str], limit: int) -> str:
    shown = ", ".join(" ".join(i.split()) for i in items[:limit])
    return shown + (f", +{len(items) - limit} more" if len(items) > limit else "")


def _doc_line(doc: _Doc, depth: int) -> str:
    """``- [title](path): N tokens; A (A1, A2), B`` with ``depth`` heading levels (0-2)."""
    line = f"- {_link(doc.title, doc.path)}: {doc.tokens:,} tokens"
    if depth and doc.headings:
        parts = []
        for h in doc.headings:
            kids = f" ({_clipped(list(h.children), MAX_CHILDREN)})" if depth > 1 and h.children else ""
            parts.append(" ".join(h.title.split()) + kids)
        shown = parts[:MAX_HEADINGS]
        line += "; " + ", ".join(shown) + (f", +{len(parts) - MAX_HEADINGS} more" if len(parts) > MAX_HEADINGS else "")
    return line


def _folder_label(folder: str) -> str:
    return f"{folder}/" if folder else "./"


def _by_folder(docs: list[_Doc], key: str) -> dict[str, list[_Doc]]:
    """Documents grouped by their folder (``key="folder"``) or top-level folder (``"top"``);
    the top of the root sorts first."""
    groups: dict[str, list[_Doc]] = {}
    for doc in docs:
        folder = doc.folder if key == "folder" else doc.path.split("/", 1)[0] if "/" in doc.path else ""
        groups.setdefault(folder, []).append(doc)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] != "", kv[0])))


def _document_body(docs: list[_Doc], depth: int) -> list[str]:
    out: list[str] = []
    for folder, members in _by_folder(docs, "folder").items():
        out += ["", f"## {_folder_label(folder)}", ""]
        out += [_doc_line(d, depth) for d in members]
    return out


def _folder_lines(docs: list[_Doc], key: str) -> list[str]:
    lines = []
    for folder, members in _by_folder(docs, key).items():
        label = _folder_label(folder)
        target = urllib.parse.quote(label)
        lines.append(f"- [{_link_text(label)}]({target}): "
                     f"{messages.map_folder_note(len(members), sum(d.tokens for d in members))}")
    return lines


def build_map(root_name: str, rows: Iterable[HeadingRow], max_tokens: int = DEFAULT_MAP_TOKENS,
              empty_note: str | None = None) -> DocsMap:
    """The docs map of ``rows`` (see module docstring) within ``max_tokens`` (at least 1; a map
    whose header alone is over the budget is the header). ``empty_note``: the line a map of no
    documents carries (why the index is empty and what to do)."""
    docs = _documents(rows)
    total = sum(d.tokens for d in docs)
    head = [f"# {' '.join(root_name.split()) or 'docs'}", "", f"> {messages.map_summary(len(docs), total)}"]
    if not docs and empty_note:
        head += ["", empty_note]

    def render(body: list[str], left_out: str | None) -> str:
        lines = list(head)
        if left_out:
            lines += ["", messages.map_left_out(left_out, max_tokens)]
        return "\n".join(lines + body).rstrip() + "\n"

    tiers: list[tuple[str, str | None, list[str], int]] = [
        ("headings", None, _document_body(docs, 2), len(docs)),
        ("top headings", messages.MAP_OMITS["children"], _document_body(docs, 1), len(docs)),
        ("documents", messages.MAP_OMITS["headings"], _document_body(docs, 0), len(docs)),
        ("folders", messages.MAP_OMITS["documents"], ["", "## Folders", "", *_folder_lines(docs, "folder")], 0),
        ("top folders", messages.MAP_OMITS["subfolders"], ["", "## Folders", "", *_folder_lines(docs, "top")], 0),
    ]
    if not any(d.headings and any(h.children for h in d.headings) for d in docs):
        tiers.pop(0)  # nothing two levels deep: the top-headings map is the full one
        tiers[0] = ("headings", None, tiers[0][2], tiers[0][3])
    for detail, left_out, body, listed in tiers:
        text = render(body, left_out)
        if count_tokens(text) <= max_tokens or not docs:
            return DocsMap(text, count_tokens(text), max_tokens, len(docs), listed, detail, left_out)
    # even one line per top-level folder is too long: drop folder lines from the end
    detail, left_out, body, _ = tiers[-1]
    lines = body[3:]
    groups = list(_by_folder(docs, "top").values())
    while lines:
        lines.pop()
        hidden = groups[len(lines):]
        note = messages.map_more_folders(len(hidden), sum(len(g) for g in hidden))
        text = render(["", "## Folders", "", *lines, note], left_out)
        if count_tokens(text) <= max_tokens:
            return DocsMap(text, count_tokens(text), max_tokens, len(docs), 0, detail, left_out)
    text = render([], messages.MAP_OMITS["everything"])
    return DocsMap(text, count_tokens(text), max_tokens, len(docs), 0, "summary", messages.MAP_OMITS["everything"])
