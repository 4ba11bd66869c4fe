"""What a notes vault (Obsidian, Dendron, Foam) or a docs site (MkDocs, Docusaurus) says about a
document besides its headings: names, tags, description and dates from the front matter, inline
``#tags`` in its prose, and the language of its fenced code blocks.

Rules:

* ``aliases`` (or ``alias``): a YAML list, or a string of comma-separated names.
* ``tags`` (or ``tag``): a YAML list, or a string split on commas and spaces; a leading ``#`` is
  dropped; nested tags keep their ``/`` (``project/alpha``); a trailing ``/`` goes.
* Inline tags (Obsidian's rule, ``token_tags``): ``#`` at the start of a line or after white
  space (tab, NBSP, ideographic space), or right after another tag (``#a#b`` is ``a`` and
  ``b``), followed by letters, digits, ``_``, ``-`` and ``/`` (and Dendron's ``.``, not at the
  end), holding at least one character that is not a digit (``#123`` is an issue number).
  They are read from markdown-it's inline tokens of every block with inline text (paragraphs,
  list items, table cells, quotes, headings: ``## Decisions #decision``), text and link text
  only: never code spans or blocks, math, HTML (inline comments, HTML blocks) or a link's
  destination, so ``# Title``, ``C#``, ``(#x)``, ``[x](#frag)`` and ``http://host/#frag`` are
  no tags.
* Tags are compared case-insensitively in ``text.match_form``; a tag filter ``a`` matches ``a``
  and every nested ``a/...`` (Obsidian) or ``a....`` (Dendron's hierarchy: ``stage.seed``)
  (``tag_form``, ``store.tags.tag_condition``).
* ``date`` / ``updated`` (also ``created``/``modified``/``lastmod``): YAML dates and strings as
  written (ISO), epoch numbers (Dendron writes milliseconds) as ISO 8601 UTC.
* Code language: the first word of a fence's info string, lowercased, without ``{.`` ``}``
  (`````bash title="x"`` and ``{.bash}`` are ``bash``); ``language_family`` names the spellings
  one filter matches (``bash`` also matches ``sh``, ``shell``, ``zsh``, ``console``).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text import match_form
from .frontmatter import Metadata
from .titles import front_matter_titles

if TYPE_CHECKING:  # pragma: no cover
    from markdown_it.token import Token

_INLINE_TAGS = re.compile(r"(?<!\S)((?:#[\w/.-]+)+)")
_SPLIT = re.compile(r"[,\s]+")
#: Inline token types whose text is read for tags, as what they stand for in the text; any
#: other token (code span, math, HTML, image, wikilink, an escaped character) stands for
#: ``_OPAQUE``: not white space, so no tag starts right after it.
_TAG_TEXT = {"softbreak": "\n", "hardbreak": "\n", "link_open": "", "link_close": "", "strong_open": "",
             "strong_close": "", "em_open": "", "em_close": "", "s_open": "", "s_close": ""}
_OPAQUE = "\x00"
_DATE_KEYS = {"date": ("date", "created"), "updated": ("updated", "modified", "lastmod", "last_modified")}
_FAMILIES = (
    frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession", "terminal"}),
    frozenset({"js", "javascript", "jsx", "mjs", "cjs"}),
    frozenset({"ts", "typescript", "tsx"}),
    frozenset({"py", "python", "python3", "py3"}),
    frozenset({"yaml", "yml"}),
    frozenset({"powershell", "ps", "ps1", "pwsh"}),
    frozenset({"go", "golang"}),
    frozenset({"rs", "rust"}),
    frozenset({"md", "markdown"}),
    frozenset({"json", "jsonc", "json5"}),
    frozenset({"dockerfile", "docker"}),
)


@dataclass(frozen=True)
class VaultMeta:
    """A document's names and labels. ``tags``: ``(tag as written, section index or None for
    the front matter)`` in order of first appearance, one entry per tag and place; ``aliases``
    as written; ``date``/``updated`` ISO text or None."""

    aliases: tuple[str, ...] = ()
    tags: tuple[tuple[str, int | None], ...] = ()
    description: str | None = None
    date: str | None = None
    updated: str | None = None

    def tag_names(self) -> list[str]:
        """Every distinct tag (first spelling), in order."""
        seen: dict[str, str] = {}
        for tag, _section in self.tags:
            seen.setdefault(tag_form(tag), tag)
        return list(seen.values())


def tag_form(tag: str) -> str:
    """The form tags are stored and compared in: ``match_form``, no leading ``#``, no ``/`` at
    either end. ``"#Project/Alpha/"`` -> ``"project/alpha"``."""
    return match_form(tag.strip().lstrip("#")).strip("/")


def _strings(value: Any, split: re.Pattern[str]) -> list[str]:
    if isinstance(value, (list, tuple)):
        out: list[str] = []
        for item in value:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                out.extend(_strings(str(item), split))
        return out
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [part.strip() for part in split.split(str(value)) if part.strip()]
    return []


def front_matter_tags(metadata: Metadata) -> list[str]:
    """Tags of the front matter (``tags``, else ``tag``), as written without ``#``."""
    value = metadata.get("tags", metadata.get("tag"))
    out = []
    for raw in _strings(value, _SPLIT):
        tag = raw.lstrip("#").strip("/")
        if tag:
            out.append(tag)
    return out


def aliases(metadata: Metadata) -> list[str]:
    """Aliases of the front matter (``aliases``, else ``alias``): a list, or comma-separated."""
    value = metadata.get("aliases", metadata.get("alias"))
    names = [value.strip()] if isinstance(value, str) and "," not in value else _strings(value, re.compile(r",\s*"))
    return list(dict.fromkeys(n for n in names if n))


def token_tags(children: Iterable[Token]) -> list[str]:
    """Obsidian-style ``#tags`` of one block's inline tokens (markdown-it ``children``), as
    written, in order (see the module's rules)."""
    text = "".join(tok.content if tok.type == "text" else _TAG_TEXT.get(tok.type, _OPAQUE) for tok in children)
    out = []
    for m in _INLINE_TAGS.finditer(text):
        for part in m.group(1).split("#")[1:]:
            tag = part.rstrip(".").strip("/")
            if tag and any(not ch.isdigit() and ch != "/" for ch in tag):
                out.append(tag)
    return out


def _date_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value  # Dendron: epoch milliseconds
        try:
            moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = str(value).strip()
    return text or None


def vault_meta(metadata: Metadata, inline: Iterable[tuple[str, int]]) -> VaultMeta:
    """Names, tags, description and dates of one parsed document: ``metadata`` is its front
    matter, ``inline`` its inline tags as ``(tag, section index)`` (``token_tags``, gathered by
    ``links.extract_inline``)."""
    tags: list[tuple[str, int | None]] = [(t, None) for t in front_matter_tags(metadata)]
    tags.extend(inline)
    seen: set[tuple[str, int | None]] = set()
    unique = []
    for tag, section in tags:
        key = (tag_form(tag), section)
        if key[0] and key not in seen:
            seen.add(key)
            unique.append((tag, section))
    description = metadata.get("description", metadata.get("summary"))
    dates = {}
    for name, keys in _DATE_KEYS.items():
        dates[name] = next((d for d in (_date_text(metadata.get(k)) for k in keys) if d), None)
    return VaultMeta(
        aliases=tuple(aliases(metadata)),
        tags=tuple(unique),
        description=description.strip() if isinstance(description, str) and description.strip() else None,
        date=dates["date"],
        updated=dates["updated"],
    )


def code_language(info: str) -> str:
    """The language of a fenced code block from its info string, lowercased (``""`` when none):
    ``"bash title=x"`` -> ``"bash"``, ``"{.python .numberLines}"`` -> ``"python"``."""
    word = info.strip().split(None, 1)[0] if info.strip() else ""
    word = word.strip("{}").lstrip(".").split(",", 1)[0].split("{", 1)[0]
    return word.casefold()


def language_family(name: str) -> frozenset[str]:
    """Every spelling a code-language filter ``name`` matches (itself at least)."""
    form = code_language(name)
    for family in _FAMILIES:
        if form in family:
            return family
    return frozenset({form}) if form else frozenset()


def document_names(title: str, metadata: Metadata, vault: VaultMeta) -> list[tuple[str, str]]:
    """``[(name, "title" | "alias")]``: the names a document is found by exactly: its title, its
    front-matter titles (``titles.TITLE_KEYS``: title, sidebar label, link title) and its
    aliases (duplicates are the caller's to drop)."""
    out = [(title, "title")]
    out.extend((name, "title") for name in front_matter_titles(metadata))
    out.extend((name, "alias") for name in vault.aliases)
    return out
