"""What a query or a section says about itself, read from its text alone (no store): identifier
strength, pasted logs, CJK share, bodyless sections, release notes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..text import is_cjk

_STRONG = re.compile(r"\w_\w|\w(?:\.|::)\w|^--?\w|[a-z][A-Z]|\w\(\)")
_CAPS = re.compile(r"^[A-Z][A-Z0-9]{4,}$")  # ECONNRESET, SIGTERM; not JNI, API
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
#: Release notes: a section under a version heading ("6.5.0 / 2022-10-06", "0.14.0 (August
#: 2020) > Fixed") in a file named like a changelog. They mention every option and config key in
#: passing, so unless the query asks about versions or changes they sit lower on each list.
_CHANGELOG_FILE = re.compile(r"(?i)(^|/)(change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases)(\.[^/]*)?$")
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.])")
_CHANGE_WORDS = re.compile(r"(?i)\b(change ?log|changes?|changed|release[sd]?|version|versions|history|added|removed|deprecated|fixed|upgrade)\b")


def strong_identifier(raw: str) -> bool:
    """An identifier that cannot be an ordinary word: it has ``_``, a dot or ``::`` between
    word characters, a leading ``--``, a camelCase hump, or digits mixed into capitals."""
    return bool(_STRONG.search(raw))


def boost_identifier(raw: str) -> bool:
    """Identifiers whose verbatim presence earns the exact-match list: strong ones (see
    ``strong_identifier``) and ALL-CAPS names (``ECONNRESET``, ``HTTP2``). Kebab-case words and
    slash-joined words (``rate-limit``, ``watch/trace``) are left to BM25: they are often prose."""
    return strong_identifier(raw) or bool(_CAPS.match(raw))


def pasted(text: str) -> bool:
    """True for a query of several non-blank lines: text pasted from a terminal or a log."""
    return sum(1 for line in text.splitlines() if line.strip()) > 1


def cjk_share(text: str) -> float:
    """Share of CJK characters among the letters and digits of ``text`` (0.0 - 1.0)."""
    chars = [ch for ch in text if ch.isalnum()]
    return sum(1 for ch in chars if is_cjk(ch)) / len(chars) if chars else 0.0


def bodyless(text: str, min_chars: int) -> bool:
    """True for a section that is (almost) only its heading (fewer than ``min_chars`` body
    characters): it cannot answer anything itself, though its short length makes BM25 love it
    when the breadcrumb matches."""
    body = [ln for ln in text.split("\n")[1:] if ln.strip() and not _SETEXT.match(ln)]
    return sum(len(ln.strip()) for ln in body) < min_chars


def release_notes(row: Mapping[str, Any]) -> bool:
    """True for a changelog entry: a changelog-named file and a version number in the breadcrumb."""
    return bool(_CHANGELOG_FILE.search(row["file_path"]) and _VERSION.search(row["heading_path"]))


def asks_about_changes(text: str) -> bool:
    """True when the query names a version number or asks what changed / was released."""
    return bool(_VERSION.search(text) or _CHANGE_WORDS.search(text))
