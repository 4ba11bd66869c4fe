"""The titles a docs site's own navigation gives its pages, read once per index run.

Sources, looked for in every folder at or above the indexed documents' folders (inside the docs
root); a nearer (deeper) file wins over a farther one:

* ``mkdocs.yml`` / ``mkdocs.yaml``: ``nav`` entries ``- Title: path.md`` (nested sections too),
  paths relative to its ``docs_dir`` (default ``docs``). MkDocs' custom YAML tags
  (``!!python/name:...``, ``!ENV``, ``!relative``) are read as plain values, never executed.
* mdBook ``SUMMARY.md``: each ``[Title](path.md)`` link, paths relative to the file's folder.
* Docusaurus ``_category_.json``: its ``label`` titles the folder's index page (``index.md``,
  ``README.md`` or ``<folder>.md`` inside it).

A file that cannot be read or parsed is skipped (logged at debug level): navigation is a hint,
never a reason to fail a run. Titles are used only for pages without a front-matter title or an
H1 (``markdown/titles.py``).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from ..markdown.parse import heading_plain_text

log = logging.getLogger("markdown_memory.navigation")

MKDOCS_FILES = ("mkdocs.yml", "mkdocs.yaml")
SUMMARY_FILE = "SUMMARY.md"
CATEGORY_FILE = "_category_.json"
#: Navigation files larger than this are not read (a real one is a few kilobytes).
MAX_NAV_BYTES = 2_000_000
_SUMMARY_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])+)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


class _MkdocsLoader(yaml.SafeLoader):
    """A safe loader that reads any tag (``!!python/name:x``, ``!ENV [A, b]``) as its plain value."""


def _plain(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    return None


_MkdocsLoader.add_multi_constructor("!", _plain)
_MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/", _plain)


def _read_text(path: Path) -> str | None:
    """The UTF-8 text of a regular file that is not a link, or None (too large, unreadable)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_NAV_BYTES:
            return None
        return path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        log.debug("navigation file %s not read: %s", path, exc)
        return None


def _local(folder: str, target: str) -> str | None:
    """``target`` (a link in a navigation file of ``folder``) as a path relative to the docs
    root, or None for an external link, an anchor or a path leaving the root."""
    target = target.split("#", 1)[0].split("?", 1)[0].strip()
    if not target or _EXTERNAL.match(target) or target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)
    return None if joined.startswith("..") or joined == "." else joined


def mkdocs_titles(text: str, folder: str = "") -> dict[str, str]:
    """``{path: title}`` of an ``mkdocs.yml`` text found in ``folder`` (relative to the docs
    root, "" for the root): the ``nav`` entries with a title. Raises yaml.YAMLError."""
    config = yaml.load(text, Loader=_MkdocsLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(config, dict):
        return {}
    docs_dir = config.get("docs_dir") or "docs"
    base = _local(folder, str(docs_dir)) if isinstance(docs_dir, str) else None
    if base is None:
        return {}
    out: dict[str, str] = {}

    def walk(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue  # a bare path: mkdocs titles it from the page itself
            for title, value in item.items():
                if isinstance(value, list):
                    walk(value)
                elif isinstance(value, str) and isinstance(title, (str, int, float)) and str(title).strip():
                    rel = _local(base, value)
                    if rel is not None:
                        out.setdefault(rel, str(title).strip())

    walk(config.get("nav"))
    return out


def summary_titles(text: str, folder: str = "") -> dict[str, str]:
    """``{path: title}`` of an mdBook ``SUMMARY.md`` text found in ``folder``: every
    ``[Title](path)`` link (title as plain text: ``[`cargo build`](x.md)`` -> ``cargo build``)
    outside HTML comments (a translated book keeps the original entries commented out)."""
    out: dict[str, str] = {}
    for m in _SUMMARY_LINK.finditer(_HTML_COMMENT.sub("", text)):
        rel = _local(folder, m.group(2))
        title = heading_plain_text(m.group(1))
        if rel is not None and title:
            out.setdefault(rel, title)
    return out


def category_titles(text: str, folder: str, documents: set[str]) -> dict[str, str]:
    """``{path: label}`` for the index page of ``folder`` among ``documents`` (paths relative to
    the docs root), from a Docusaurus ``_category_.json`` text. Raises ValueError (bad JSON)."""
    data = json.loads(text)
    label = data.get("label") if isinstance(data, dict) else None
    if not isinstance(label, str) or not label.strip():
        return {}
    name = posixpath.basename(folder)
    for stem in ("index", "README", "readme", name):
        for ext in (".md", ".mdx"):
            rel = posixpath.join(folder, stem + ext) if folder else stem + ext
            if rel in documents:
                return {rel: label.strip()}
    return {}


def _folders(paths: Iterable[str]) -> list[str]:
    """Every folder at or above the folders of ``paths`` ("" is the root), shallow first."""
    found: set[str] = set()
    for rel in paths:
        folder = posixpath.dirname(rel)
        while folder not in found:
            found.add(folder)
            if not folder:
                break
            folder = posixpath.dirname(folder)
    return sorted(found, key=lambda f: (f.count("/") + bool(f), f))


def _titles_of(name: str, text: str, folder: str, documents: set[str]) -> dict[str, str]:
    """The titles the navigation file ``name`` (text ``text``) of ``folder`` gives. Raises
    yaml.YAMLError or ValueError for a file that does not parse."""
    if name in MKDOCS_FILES:
        return mkdocs_titles(text, folder)
    if name == SUMMARY_FILE:
        return summary_titles(text, folder)
    return category_titles(text, folder, documents)


def _folder_titles(root: Path, folder: str, documents: set[str]) -> dict[str, str]:
    """The navigation titles the files of one ``folder`` give (mkdocs, then SUMMARY, then
    _category_; an earlier source keeps its title)."""
    here = root / folder if folder else root
    out: dict[str, str] = {}
    for name in (*MKDOCS_FILES, SUMMARY_FILE, CATEGORY_FILE):
        text = _read_text(here / name)
        if text is None:
            continue
        try:
            titles = _titles_of(name, text, folder, documents)
        except (yaml.YAMLError, ValueError, RecursionError) as exc:
            log.debug("navigation file %s/%s not parsed: %s", folder, name, exc)
            continue
        for rel, title in titles.items():
            out.setdefault(rel, title)
    return out


def navigation_titles(root: Path, documents: Iterable[str]) -> dict[str, str]:
    """``{path: title}`` for the ``documents`` (POSIX paths relative to ``root``) that some
    navigation file at or above their folder titles; the nearest file wins. Never raises."""
    docs = set(documents)
    titles: dict[str, str] = {}
    for folder in _folders(docs):  # shallow first: a deeper file overrides
        for rel, title in _folder_titles(root, folder, docs).items():
            if rel in docs:
                titles[rel] = title
    return titles
