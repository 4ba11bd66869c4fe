"""Resolve what an agent typed into an indexed document path and a section breadcrumb.

Paths: relative to the docs root, absolute inside it (``\\`` or ``/``, any drive-letter case,
``\\\\?\\`` prefix), or a unique path suffix. Anything resolving outside the root (``..``,
another absolute path, a symlink leaving the root) raises PathOutsideRootError naming the root.

Breadcrumbs, in order: exact; spacing around ``>`` ignored; case-insensitive; trailing
fragment (``Child > Sub`` or a bare title); fuzzy (each requested part is an abbreviation or
word prefix of the matching heading part: ``db`` -> ``Database``, ``deploy`` -> ``Deployment``);
close spelling (``restrat`` -> ``Restart``). A breadcrumb copied from the file's raw Markdown
(``[Release](https://x) notes``) is also read as the plain text titles are made of. The fuzzy and close-spelling steps never change a
number: ``Same [3]`` does not pick ``Same [2]`` (duplicate headings), nor ``Step 4`` ``Step 5``;
``Same [1]`` names the first duplicate, ``Same``, when a ``Same [2]`` exists.
An ambiguous request lists the exact candidates; a miss lists the nearest ones.
"""

from __future__ import annotations

import difflib
import ntpath
import os
import posixpath
import re
import unicodedata
from pathlib import Path

from ..errors import DocumentNotFoundError, PathOutsideRootError, SectionNotFoundError
from ..files.walk import is_markdown_name
from ..markdown.parse import SEPARATOR, heading_plain_text, strip_heading_attributes
from ..text import WORD

_PART = re.compile(r" \(Part \d+\)$")
_SPLIT = re.compile(r"\s*>\s*")
_NUMBER = re.compile(r"\d+")


def _windows_like(raw: str) -> bool:
    return bool(re.match(r"^(?:\\\\\?\\)?[A-Za-z]:[\\/]", raw)) or raw.startswith("\\\\")


def normalise_request_path(raw: str, root: Path, root_text: str | None = None) -> str:
    """Turn a requested path into a POSIX path relative to the root (may not exist).

    ``root_text`` lets tests pass a Windows root such as ``C:\\Docs``. Raises
    PathOutsideRootError for anything outside the root, DocumentNotFoundError for an empty path.
    """
    text = raw.strip().strip('"').strip("'")
    if not text:
        raise DocumentNotFoundError("file_path is empty; pass a path relative to the docs root")
    root_str = root_text if root_text is not None else str(root)
    if text.startswith("\\\\?\\"):
        text = text[4:]
    if _windows_like(text) or _windows_like(root_str):
        # Windows semantics: case-insensitive drive and names, either separator.
        req = ntpath.normpath(text.replace("/", "\\"))
        base = ntpath.normpath(root_str.replace("/", "\\"))
        if ntpath.isabs(req):
            if ntpath.normcase(req) == ntpath.normcase(base):
                raise DocumentNotFoundError("file_path names the docs root itself; pass a Markdown file")
            prefix = ntpath.normcase(base).rstrip("\\") + "\\"
            if not ntpath.normcase(req).startswith(prefix):
                raise PathOutsideRootError(f"path {raw!r} is outside the docs root {root_str!r}")
            rel = req[len(prefix) :]
        else:
            rel = req
        rel = rel.replace("\\", "/")
    else:
        if os.path.isabs(text):
            real = os.path.realpath(text)
            root_real = os.path.realpath(root_str)
            if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
                norm = os.path.normpath(text)
                if not norm.startswith(root_real.rstrip(os.sep) + os.sep):
                    raise PathOutsideRootError(f"path {raw!r} is outside the docs root {root_str!r}")
                real = norm
            rel = os.path.relpath(real, root_real).replace(os.sep, "/")
        else:
            rel = text.replace("\\", "/")
    rel = posixpath.normpath(rel)
    if rel == ".." or rel.startswith("../") or rel.startswith("/"):
        raise PathOutsideRootError(f"path {raw!r} is outside the docs root {root_str!r}")
    if rel == ".":
        raise DocumentNotFoundError("file_path names the docs root itself; pass a Markdown file")
    return rel


def resolve_document(raw: str, root: Path, indexed: list[str]) -> str:
    """An indexed document path for ``raw``: exact, case-insensitive, the same name in another
    Unicode normal form (NFC/NFD), the target of a symlink inside the root, or a unique suffix.

    Raises PathOutsideRootError, or DocumentNotFoundError listing close candidates; refuses
    non-Markdown names.
    """
    rel = normalise_request_path(raw, root)
    if not is_markdown_name(rel.rsplit("/", 1)[-1]):
        raise DocumentNotFoundError(f"{rel!r} is not a Markdown file (.md, .markdown, .mdx)")
    # A symlink inside the root that points outside it must not be read through.
    real = os.path.realpath(root / rel)
    root_real = os.path.realpath(root)
    if os.path.lexists(root / rel) and not (real == root_real or real.startswith(root_real + os.sep)):
        raise PathOutsideRootError(f"path {raw!r} resolves outside the docs root {str(root)!r}")
    if rel in indexed:
        return rel
    lowered = {p.lower(): p for p in indexed}
    if rel.lower() in lowered:
        return lowered[rel.lower()]
    # The same name in another Unicode normal form (macOS writes NFD, keyboards type NFC).
    composed = {unicodedata.normalize("NFC", p).casefold(): p for p in indexed}
    if unicodedata.normalize("NFC", rel).casefold() in composed:
        return composed[unicodedata.normalize("NFC", rel).casefold()]
    # A symlink inside the root: its target is indexed under the target's own path.
    if os.path.islink(root / rel) and real.startswith(root_real + os.sep):
        target = os.path.relpath(real, root_real).replace(os.sep, "/")
        if target in indexed:
            return target
    suffix = [p for p in indexed if p.endswith("/" + rel) or p.lower().endswith("/" + rel.lower())]
    if len(suffix) == 1:
        return suffix[0]
    if len(suffix) > 1:
        raise DocumentNotFoundError(
            f"{rel!r} matches {len(suffix)} documents; pass one of them", candidates=sorted(suffix)[:10]
        )
    near = difflib.get_close_matches(rel, indexed, n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else "; list the indexed paths with list_documents (CLI: markdown-memory list)"
    raise DocumentNotFoundError(f"no indexed document {rel!r} under {str(root)!r}{hint}", candidates=near)


def _parts(path: str) -> list[str]:
    """Breadcrumb parts, each without a trailing attribute block (headings are stored without
    it, and an agent may copy ``Install {#install}`` from the file)."""
    return [strip_heading_attributes(p) for p in _SPLIT.split(path.strip()) if p != ""]


def _abbrev_match(want: str, have: str) -> bool:
    """``want`` abbreviates ``have``: each word of ``want`` is a prefix of a word of ``have`` in
    order, or ``want`` is a prefix/subsequence-of-initials (``db`` ~ ``Database``)."""
    w = want.lower().strip()
    h = have.lower().strip()
    if not w or not _keeps_numbers(w, h):
        return False
    if h.startswith(w):
        return True
    hw = WORD.findall(h)
    ww = WORD.findall(w)
    if ww and hw:
        k = 0
        for word in hw:
            if k < len(ww) and word.startswith(ww[k]):
                k += 1
        if k == len(ww):
            return True
    # consonant skeleton / subsequence: "db" in "database", "cfg" in "config"
    if len(w) >= 2 and w[0] == h[0]:
        it = iter(h)
        return all(ch in it for ch in w)
    return False


def _edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap adjacent)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def _is_typo(want: str, have: str) -> bool:
    """A misspelling: one edit per 8 characters (at least one), same first letter.
    ``restrat`` ~ ``Restart``; ``Uninstall`` is not ``Install`` (two edits in 9)."""
    w, h = want.lower().strip(), have.lower().strip()
    if not w or not h or w[0] != h[0] or _NUMBER.findall(w) != _NUMBER.findall(h):
        return False
    return _edit_distance(w, h) <= max(1, len(h) // 8)


def _keeps_numbers(want: str, have: str) -> bool:
    """Every number written in ``want`` occurs in ``have`` (as a whole number, in order): an
    abbreviation may leave numbers out but never change one."""
    have_numbers = iter(_NUMBER.findall(have))
    return all(number in have_numbers for number in _NUMBER.findall(want))


_FIRST = re.compile(r"^(.*\S)\s*\[1\]$")


def _first_duplicate(want: list[str], available: list[str]) -> str | None:
    """``want`` with each ``X [1]`` part read as ``X``, the first of duplicate headings (the
    parser numbers only the second on: ``X``, ``X [2]``, ...), when an ``X [2]`` exists; else None."""
    parts = {p.lower() for a in available for p in _parts(a)}
    changed = False
    out = []
    for part in want:
        m = _FIRST.match(part)
        if m and f"{m.group(1)} [2]".lower() in parts:
            out.append(m.group(1))
            changed = True
        else:
            out.append(part)
    return " > ".join(out) if changed else None


def resolve_heading(requested: str, available: list[str], document: str = "this document", *,
                    _plain_form: bool = False) -> str:
    """Pick one breadcrumb from ``available`` (see module docstring). Raises
    SectionNotFoundError with ``candidates`` (ambiguous: every match; miss: nearest); its
    message names ``document``."""
    req = requested.strip()
    if req in available:
        return req
    want = _parts(req)
    norm = {" > ".join(_parts(a)): a for a in available}
    joined = " > ".join(want)
    if joined in norm:
        return norm[joined]
    # Raw Markdown copied from the file (titles are the plain text a reader sees): resolved
    # as its plain text, before fuzzy steps could match the markup's words elsewhere.
    plain = " > ".join(p for p in (heading_plain_text(part) for part in req.split(SEPARATOR)) if p)
    if plain and plain != req and not _plain_form:
        try:
            return resolve_heading(plain, available, document, _plain_form=True)
        except SectionNotFoundError as exc:
            if exc.ambiguous:
                raise

    def pick(matches: list[str], how: str) -> str | None:
        uniq = list(dict.fromkeys(matches))
        bases = {_PART.sub("", m) for m in uniq}
        if len(uniq) > 1 and len(bases) == 1 and bases <= set(available):
            return bases.pop()  # one section and its own (Part n) pieces: the whole section
        if len(uniq) == 1:
            return uniq[0]
        if len(uniq) > 1:
            raise SectionNotFoundError(
                f"heading_path {requested!r} is ambiguous in {document} ({how}); pass one of the candidates exactly",
                candidates=uniq[:20],
                ambiguous=True,
            )
        return None

    lower = [a for a in available if " > ".join(_parts(a)).lower() == joined.lower()]
    found = pick(lower, "case-insensitive")
    if found:
        return found
    def same(w: str, h: str) -> bool:
        return w.lower() == h.lower()

    # Trailing fragment, then abbreviations / word prefixes, then misspellings: each requested
    # part is compared with the aligned part at the end of every breadcrumb.
    for how, part_matches in (
        ("matches the end of several breadcrumbs", same),
        ("fuzzy match", _abbrev_match),
        ("close spelling", _is_typo),
    ):
        matches = [
            a for a in available
            if want and len(want) <= len(_parts(a))
            and all(part_matches(w, h) for w, h in zip(want, _parts(a)[-len(want):]))
        ]
        found = pick(matches, how)
        if found:
            return found
    first = _first_duplicate(want, available)
    if first is not None:
        try:
            return resolve_heading(first, available, document)
        except SectionNotFoundError as exc:
            if exc.ambiguous:
                raise
    near = difflib.get_close_matches(req, available, n=5, cutoff=0.3)
    if not near:
        near = [a for a in available if want and want[-1].lower() in a.lower()][:5]
    hint = f"; nearest: {', '.join(near)}" if near else ""
    raise SectionNotFoundError(f"no section {requested!r} in {document}{hint}", candidates=near)
