"""Resolve what an agent typed into an indexed document path and a section breadcrumb.

Paths: relative to the docs root, absolute inside it (``\\`` or ``/``, any drive-letter case,
``\\\\?\\`` prefix), or a unique path suffix; compared literally first, then case-insensitively,
then in ``text.match_form`` (NFC and NFD spellings of a name are one name). A path that does not
exist literally is tried as a Markdown link destination: ``<…>`` removed, the ``#fragment`` cut
and percent-escapes decoded (``guides/Deploy%20Guide%20(v2).md``); a file really named
``a%20b.md`` is found literally first. Anything resolving outside the root (``..``,
another absolute path, a symlink leaving the root) raises PathOutsideRootError naming the root.

Breadcrumbs, in order: exact; spacing around ``>`` ignored; the same text in
``text.match_form`` (case, NFC/NFD and invisible characters such as soft hyphens ignored); trailing
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
from pathlib import Path
from urllib.parse import unquote

from .. import messages
from ..errors import DocumentNotFoundError, PathOutsideRootError, SectionNotFoundError
from ..files.walk import MARKDOWN_SUFFIXES, is_markdown_name
from ..markdown.parse import SEPARATOR, heading_plain_text, strip_heading_attributes
from ..text import WORD, match_form

_PART = re.compile(r" \(Part \d+\)$")
_SPLIT = re.compile(r"\s*>\s*")
_NUMBER = re.compile(r"\d+")


def _real_path(path: str | os.PathLike[str], raw: str) -> str:
    """``os.path.realpath(path)``; a link replaced while it is resolved (EINVAL from its
    ``readlink``, let out by Python before 3.13, as in the walk: ``files.walk._add_link``)
    raises DocumentNotFoundError naming ``raw``, not a bare OSError."""
    try:
        return os.path.realpath(path)
    except OSError as exc:
        raise DocumentNotFoundError(f"{raw!r} changed while it was being read ({exc.strerror or exc}); "
                                    "try again") from None


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
            real = _real_path(text, raw)
            root_real = _real_path(root_str, raw)
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


def link_destination(raw: str) -> str | None:
    """``raw`` read as a Markdown link destination: surrounding ``<…>`` removed, the
    ``#fragment`` cut, percent-escapes decoded (``Q%26A%20%233.md#top`` -> ``Q&A #3.md``).
    None when that changes nothing."""
    text = raw.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    text = unquote(text.split("#", 1)[0])
    return text if text and text != raw.strip() else None


def resolve_document(raw: str, root: Path, indexed: list[str]) -> str:
    """An indexed document path for ``raw``: exact, case-insensitive, the same name in
    ``match_form`` (NFC/NFD), the target of a symlink inside the root, or a unique suffix; when
    none is found, the same for ``raw`` read as a link destination (``link_destination``).

    Raises PathOutsideRootError, or DocumentNotFoundError listing close candidates; refuses
    non-Markdown names.
    """
    try:
        return _resolve_literal(raw, root, indexed)
    except DocumentNotFoundError as exc:
        target = link_destination(raw)
        if target is None:
            raise
        try:
            return _resolve_literal(target, root, indexed)
        except DocumentNotFoundError as decoded_exc:
            # the literal error names what was typed, unless it only said "not Markdown"
            # (``x.md#frag``) or found nothing near while the decoded path did
            literal_markdown = is_markdown_name(raw.strip().replace("\\", "/").rsplit("/", 1)[-1])
            better = literal_markdown and (exc.candidates or not decoded_exc.candidates)
            raise (exc if better else decoded_exc) from None


def _resolve_literal(raw: str, root: Path, indexed: list[str]) -> str:
    rel = normalise_request_path(raw, root)
    if not is_markdown_name(rel.rsplit("/", 1)[-1]):
        raise DocumentNotFoundError(messages.not_markdown(rel, MARKDOWN_SUFFIXES))
    # A symlink inside the root that points outside it must not be read through.
    real = _real_path(root / rel, raw)
    root_real = _real_path(root, raw)
    if os.path.lexists(root / rel) and not (real == root_real or real.startswith(root_real + os.sep)):
        raise PathOutsideRootError(f"path {raw!r} resolves outside the docs root {str(root)!r}")
    if rel in indexed:
        return rel
    lowered = {p.lower(): p for p in indexed}
    if rel.lower() in lowered:
        return lowered[rel.lower()]
    # The same name in another Unicode normal form (macOS writes NFD, keyboards type NFC).
    same = {match_form(p): p for p in indexed}
    if match_form(rel) in same:
        return same[match_form(rel)]
    # A symlink inside the root: its target is indexed under the target's own path.
    if os.path.islink(root / rel) and real.startswith(root_real + os.sep):
        target = os.path.relpath(real, root_real).replace(os.sep, "/")
        if target in indexed:
            return target
    key = "/" + match_form(rel)
    suffix = [p for p in indexed if p.endswith("/" + rel) or match_form("/" + p).endswith(key)]
    if len(suffix) == 1:
        return suffix[0]
    if len(suffix) > 1:
        raise DocumentNotFoundError(
            f"{rel!r} matches {len(suffix)} documents; pass one of them", candidates=sorted(suffix)[:10]
        )
    near = difflib.get_close_matches(rel, indexed, n=5, cutoff=0.5)
    raise DocumentNotFoundError(messages.no_indexed_document(rel, str(root), near), candidates=near)


def disk_spelling(root: Path, rel: str) -> str:
    """The spelling on disk of the POSIX path ``rel`` under ``root``: ``rel`` itself when it
    exists, else each missing part replaced by the one entry of its folder with the same name
    in ``match_form`` (an NFC request for an NFD name), else the same for ``rel`` read as a
    link destination. ``rel`` unchanged when nothing on disk matches (the caller reports it)."""
    if os.path.lexists(root / rel):
        return rel
    decoded = link_destination(rel)
    for candidate in (rel, posixpath.normpath(decoded) if decoded else None):
        if candidate is None or candidate.startswith(("../", "/")) or candidate == "..":
            continue
        found = _spell_parts(root, candidate.split("/"))
        if found is not None:
            return found
    return rel


def _spell_parts(root: Path, parts: list[str]) -> str | None:
    out: list[str] = []
    for part in parts:
        folder = root.joinpath(*out)
        if os.path.lexists(folder / part):
            out.append(part)
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        same = [n for n in names if match_form(n, fold_case=False) == match_form(part, fold_case=False)]
        if len(same) != 1:
            return None
        out.append(same[0])
    return "/".join(out)


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
    parts = {p for a in available for p in _parts(match_form(a))}
    changed = False
    out = []
    for part in want:
        m = _FIRST.match(part)
        if m and f"{m.group(1)} [2]" in parts:
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

    # From here on both sides are compared in match_form: NFC and NFD spellings, soft hyphens
    # and zero-width characters, case and full-width forms are the same text.
    folded = {a: _parts(match_form(a)) for a in available}
    want = _parts(match_form(req))
    same_text = [a for a in available if folded[a] == want]
    found = pick(same_text, "the same text")
    if found:
        return found

    def same(w: str, h: str) -> bool:
        return w == h

    # Trailing fragment, then abbreviations / word prefixes, then misspellings: each requested
    # part is compared with the aligned part at the end of every breadcrumb.
    for how, part_matches in (
        ("matches the end of several breadcrumbs", same),
        ("fuzzy match", _abbrev_match),
        ("close spelling", _is_typo),
    ):
        matches = [
            a for a in available
            if want and len(want) <= len(folded[a])
            and all(part_matches(w, h) for w, h in zip(want, folded[a][-len(want):]))
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
    near = nearest_headings(req, available)
    if near:
        hint = f"; nearest: {', '.join(near)}"
    else:  # nothing alike: the document's top headings, so the next call has somewhere to go
        near = [a for a in available if len(_parts(a)) <= 2][:NEAREST]
        hint = f"; its headings include: {', '.join(near)}" if near else ""
    raise SectionNotFoundError(f"no section {requested!r} in {document}{hint}", candidates=near)


def resolved_as_asked(requested: str, resolved: str) -> bool:
    """``resolved`` (a breadcrumb ``resolve_heading`` picked for ``requested``) names the
    heading asked: the same text apart from spacing, case, Unicode form and Markdown markup,
    whole or as the trailing parts of the breadcrumb (a bare title). False for the fuzzy and
    close-spelling steps and for an ``X [1]`` read as ``X``: those deserve a note."""
    have = _parts(match_form(resolved))
    plain = " > ".join(heading_plain_text(part) for part in requested.split(SEPARATOR))
    for form in (requested, plain):
        want = _parts(match_form(form))
        if want and want == have[-len(want):]:
            return True
    return False


#: how many breadcrumbs a missed heading suggests
NEAREST = 5
#: a breadcrumb is suggested when its spelling (whole, or last part against the request's last
#: part) is at least this similar (difflib ratio), or this share of the request's words is in it
NEAR_BAR = 0.5
#: words shorter than this count only when equal (``to``, ``a``, ``in`` do not suggest)
_SHORT_WORD = 4


def nearest_headings(requested: str, available: list[str], n: int = NEAREST) -> list[str]:
    """Up to ``n`` breadcrumbs of ``available`` nearest to ``requested``, best first (document
    order breaks ties), one per look-alike group (case kept). Near means: a similar spelling of
    the whole breadcrumb or of its last heading, or most of the request's words in it, a word
    matching its inflections (``validator`` / ``Validators``, ``config`` / ``Configuration``);
    equally near ones by spelling. Empty when nothing is near."""
    want = _parts(match_form(requested))
    if not want:
        return []
    joined, last = " > ".join(want), want[-1]
    words = {w for w in WORD.findall(joined)}
    scored: dict[str, tuple[float, float, int]] = {}
    for order, crumb in enumerate(available):
        parts = _parts(match_form(crumb))
        text = " > ".join(parts)
        spelling = max(difflib.SequenceMatcher(None, joined, text).ratio(),
                       difflib.SequenceMatcher(None, last, parts[-1] if parts else "").ratio())
        have = set(WORD.findall(text))
        shared = sum(any(_same_word(w, h) for h in have) for w in words) / len(words) if words else 0.0
        score = max(spelling, shared)
        key = match_form(crumb, fold_case=False)
        if score >= NEAR_BAR and (key not in scored or scored[key][:2] < (score, spelling)):
            scored[key] = (score, spelling, order)
    best = sorted(scored.values(), key=lambda s: (-s[0], -s[1], s[2]))[:n]
    return [available[order] for _, _, order in best]


def _same_word(want: str, have: str) -> bool:
    """``want`` and ``have`` (case-folded) are one word or inflections of one (they share a
    prefix of at least 4 characters and three quarters of the shorter word)."""
    if want == have:
        return True
    if min(len(want), len(have)) < _SHORT_WORD:
        return False
    common = len(os.path.commonprefix([want, have]))
    return common >= _SHORT_WORD and common >= 0.75 * min(len(want), len(have))
