"""Plain text of inline Markdown: what a reader sees of a heading once it is rendered.

The one rule for heading titles (and so breadcrumbs and outline titles): walk markdown-it's
inline children and keep the visible text -- link text without the URL, code-span text, image
alt text, emphasis / strikethrough markers dropped, backslash escapes and HTML entities decoded
(markdown-it already decodes them into ``text`` tokens), raw inline HTML tags dropped with the
text between them kept, line breaks as one space. Whitespace runs become one space.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from markdown_it.token import Token

from ..text import HTML_TAG

# Inline tokens whose text a reader sees (``image`` is handled through its alt children).
_TEXT = {"text", "code_inline", "text_special"}
_BREAK = {"softbreak", "hardbreak"}


def inline_plain_text(children: Sequence[Token] | None) -> str:
    """The visible text of markdown-it inline ``children`` on one line (whitespace runs -> one
    space, stripped); ``""`` for none."""
    out: list[str] = []
    _collect(children or (), out)
    return " ".join("".join(out).split())


def _collect(children: Sequence[Token], out: list[str]) -> None:
    for tok in children:
        if tok.type in _TEXT:
            out.append(tok.content)
        elif tok.type in _BREAK:
            out.append(" ")
        elif tok.type == "image":
            _collect(tok.children or (), out)
        # link_open/close, em/strong/s open/close, html_inline: markup only.


def html_plain_text(fragment: str) -> str:
    """The visible text of an HTML fragment (an ``<h2>`` written as HTML): tags dropped,
    entities decoded, on one line."""
    return " ".join(html.unescape(HTML_TAG.sub(" ", fragment)).split())
