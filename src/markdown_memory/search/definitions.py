"""Definitions: the sections that define an identifier of the query.

A section *defines* an identifier when its own heading is that identifier (``--transfers int``,
``-u, --update``). On a long reference page the identifier is mentioned many times, in passing;
its definition is where a reader looks it up. ``rank`` gives the definitions a list of their own.
(Measured and left out: table rows naming the identifier in their first cell, and headings that
end with it in parentheses, ``Restart policies (--restart)``: on eval/corpus2 they lowered Top-1
from 56% to 48% and 55%, as every alias page of a CLI repeats the options table.)

Among several definitions of one identifier, the one standing among many other definitions (a
reference list of flags, an options table) is the definition; one with far fewer identifier
neighbours (a provider page's note on the flag) is a mention and is left out.
"""

from __future__ import annotations

import re

from ..store import Store
from ..store.scope import Scope
from ..text import match_form
from .query import AnalysedQuery, looks_like_identifier

#: A heading defines an identifier followed by at most this many argument words.
DEFINITION_EXTRA_WORDS = 2
#: A definition among fewer than 1/DEFINITION_DENSITY_SHARE as many identifier neighbours as the
#: best one is treated as a mention.
DEFINITION_DENSITY_SHARE = 2
#: How many sections whose breadcrumb holds the identifier are looked at.
DEFINITION_SCAN = 400
_ALTERNATIVE_SPLIT = re.compile(r"(?i)\s*(?:,|\s/\s|\s\|\s|\bor\b)\s*")
_DEFINABLE = re.compile(r"^--?\w|\w(?:_|\.|::)\w|\w\(\)$")
_TITLE_TRIM = "`'\"*_ "
_CAMEL_TYPE = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+$")
#: Value types that option references print after a flag (``--timeout duration``).
_TYPE_WORDS = frozenset("int uint int64 float bool string strings stringarray list duration size path file dir "
                        "number value count time url".split())




def defines(title: str, identifier: str) -> bool:
    """True when a section ``title`` names ``identifier`` as its subject: one of its
    comma/slash/"or"-separated alternatives starts with the identifier (case-insensitive),
    followed by nothing, or by a separator and at most DEFINITION_EXTRA_WORDS words
    (``--transfers int``, ``--config string``, ``-u, --update``, ``--bwlimit=SIZE``); not
    ``--update-dir`` nor ``--fast-list used by default``. Both sides are compared in
    ``text.match_form`` (the one rule for comparing text)."""
    ident = match_form(identifier, fold_case=False).strip(_TITLE_TRIM)
    if len(ident) < 2:
        return False
    for alt in _ALTERNATIVE_SPLIT.split(match_form(title, fold_case=False)):
        alt = alt.strip(_TITLE_TRIM)
        # case is folded on the aligned prefix only: the rest keeps its case (``SIZE``, ``N``)
        if match_form(alt[:len(ident)]) != match_form(ident):
            continue
        rest = alt[len(ident):]
        if not rest:
            return True
        if rest[0].isalnum() or rest[0] in "-_.":
            continue
        if rest.lstrip(_TITLE_TRIM)[:1] in "=[<{:(" or _arguments(rest):
            return True
    return False


def _arguments(rest: str) -> bool:
    """True when what follows an identifier in a heading reads as its argument syntax: at most
    DEFINITION_EXTRA_WORDS words, each a metavariable (``N``, ``SIZE``, ``HARD|SOFT``), a
    CamelCase type (``SizeSuffix``) or a plain type name (``int``, ``string``, ``duration``)."""
    words = rest.split()
    if not 0 < len(words) <= DEFINITION_EXTRA_WORDS:
        return False
    for word in words:
        for part in word.strip(_TITLE_TRIM + ",.").split("|"):  # HARD|SOFT|CAUTIOUS: one choice list
            if not (part.isupper() or _CAMEL_TYPE.match(part) or part.lower() in _TYPE_WORDS):
                return False
    return True


def _identifier_title(title: str) -> bool:
    first = title.strip(_TITLE_TRIM).split(" ")[0].strip(_TITLE_TRIM + ",")
    return bool(first) and looks_like_identifier(first)


def definable(raw: str) -> bool:
    """True for an identifier whose own heading is its definition: a flag (``--transfers``,
    ``-u``) or a name joined by ``_``, ``.``, ``::`` or ending in ``()`` (``RCLONE_CONFIG``,
    ``httpx.Timeout``, ``read()``). Not a word that merely looks like one: a CamelCase name
    (``WebSocket``), an abbreviation (``ID``) or hyphenated prose (``hot-reload``) heads many
    sections that are not its definition (measured on eval/corpus2)."""
    return bool(_DEFINABLE.search(raw.strip(_TITLE_TRIM)))


def definitions(store: Store, query: AnalysedQuery, path_prefix: Scope | str | None) -> dict[int, int]:
    """``{section id: identifier neighbours}`` for the sections defining an identifier of the
    query by their heading (module docstring). The count of identifier-titled siblings tells a
    reference list from a lone mention; only definitions with at least
    1/DEFINITION_DENSITY_SHARE of the best count are kept. Raises QueryNotParsedError."""
    found: dict[int, int] = {}
    by_heading: list[int] = []
    for term in query.terms:
        if not term.identifier or term.prefix or not definable(term.raw):
            continue
        for sid, title, nested in store.heading_matches(term.fts(), path_prefix, DEFINITION_SCAN):
            # A page titled by the identifier is about it as a whole: its sections already
            # share the breadcrumb, and the other lists choose among them.
            if nested and defines(title, term.raw):
                by_heading.append(sid)
    if by_heading:
        section_rows = store.section_rows(by_heading)
        siblings = store.children((r["doc_id"], r["parent_ordinal"]) for r in section_rows.values())
        for sid, r in section_rows.items():
            found[sid] = sum(_identifier_title(t) for _i, t in siblings.get((r["doc_id"], r["parent_ordinal"]), []))
    if len(found) < 2:
        return found
    best = max(found.values())
    return {sid: d for sid, d in found.items() if d * DEFINITION_DENSITY_SHARE >= best}
