"""A document's title: the name a person would give the page, never a lower-level heading.

Order (the first that exists wins):

1. the front matter's ``title``, else ``linkTitle`` (Hugo) or ``sidebar_label`` (Docusaurus);
2. the first level-1 heading (``# Title`` or an HTML ``<h1>``);
3. the title the docs site's navigation gives the page (mkdocs.yml ``nav``, mdBook
   ``SUMMARY.md``, Docusaurus ``_category_.json``; read by ``index/navigation.py``, passed in);
4. the file name as words (``strict_mode.md`` -> ``Strict mode``); an ``index``/``README`` file
   is named after its folder (``guide/index.md`` -> ``Guide``).

The *lead section* is where a page starts: its H1 section when the first heading is the H1,
else its first section (the preamble of a page without H1, as mkdocs pages often are).
A page without H1 whose front matter names it (rule 1) is shown by its site with that title as
its heading, so its preamble is addressed by that title instead of ``(preamble)``
(``parse.py``; ``(preamble)`` still reads it). Its front matter's ``id``/``slug``/``permalink``/
``url`` (``ADDRESS_KEYS``) are found by keyword search as its path is (``store/pages.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Front-matter keys that name the page, in order.
TITLE_KEYS = ("title", "linkTitle", "sidebar_label")
#: Front-matter keys that address the page on its site (found by keyword search like its path).
ADDRESS_KEYS = ("id", "slug", "permalink", "url")
_INDEX_STEMS = frozenset({"index", "readme", "_index"})
_SEPARATORS = re.compile(r"[\s_\-]+")


def front_matter_title(metadata: Mapping[str, object]) -> str | None:
    """The first non-empty string (or number) of ``TITLE_KEYS`` in ``metadata``, stripped."""
    titles = front_matter_titles(metadata)
    return titles[0] if titles else None


def front_matter_titles(metadata: Mapping[str, object]) -> list[str]:
    """Every non-empty value of ``TITLE_KEYS`` in ``metadata`` (the title, the sidebar's and
    Hugo's link titles), stripped, in key order: the names a site shows the page under."""
    return [t for key in TITLE_KEYS if (t := _scalar_text(metadata.get(key)))]


def front_matter_addresses(metadata: Mapping[str, object]) -> list[str]:
    """The addresses a docs site gives the page besides its path, from ``ADDRESS_KEYS``
    (Docusaurus ``id``/``slug``, Jekyll ``permalink``, Hugo ``slug``/``url``), stripped; a
    list value gives each of its items. A value with ``://`` is a link elsewhere (a clipped
    note's ``url: https://...``), not this page's address, and is left out."""
    out: list[str] = []
    for key in ADDRESS_KEYS:
        value = metadata.get(key)
        for item in value if isinstance(value, list) else [value]:
            if (text := _scalar_text(item)) and "://" not in text:
                out.append(text)
    return out


def _scalar_text(value: object) -> str | None:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()
    return None


def words_of_name(name: str) -> str:
    """A file or folder name as words: ``_``/``-`` become spaces, the first letter upper-cased,
    the rest as written (``strict_mode`` -> ``Strict mode``, ``API-keys`` -> ``API keys``)."""
    words = _SEPARATORS.sub(" ", name).strip()
    return words[:1].upper() + words[1:]


def file_name_title(path: str) -> str:
    """The title a file's path gives it (POSIX or Windows separators): its stem as words; an
    ``index``/``README`` file takes its folder's name (at the root, its own stem)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if not parts:
        return ""
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1].lstrip(".") else parts[-1]
    if stem.casefold() in _INDEX_STEMS and len(parts) > 1:
        stem = parts[-2]
    return words_of_name(stem) or stem


def choose_title(metadata: Mapping[str, object], h1: str | None, nav_title: str | None, path: str) -> str:
    """The document title by the module's order; ``h1`` is the first level-1 heading's text
    (None without one), ``nav_title`` the navigation's title for the page (None without)."""
    return front_matter_title(metadata) or h1 or (nav_title or "").strip() or file_name_title(path)
