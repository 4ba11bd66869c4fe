"""Query analysis: keyword terms, identifiers, and a safe FTS5 MATCH expression.

User text is never passed to FTS5 as syntax. It is cut into terms the way ``unicode61`` cuts
indexed text (runs of letters and digits; CJK runs become bigrams, see ``fts_text``); each
term is emitted as a double-quoted FTS5 string, and a chunk that the tokenizer splits into
several terms (``--dry-run``, ``os.path.join``, ``v2.4.1``, ``2026-03-14``) becomes a quoted
phrase, so it matches only that sequence. Terms are joined with ``OR``; BM25 does the rest.
Quotes, ``-``, ``:``, ``*``, ``^``, parentheses and ``NEAR``/``AND``/``OR``/``NOT`` are thus
plain text; a 10,000-character query keeps its ``MAX_TERMS`` most telling distinct terms
(``_strongest``: a rare identifier at the end of a pasted log is searched).

Word forms: the index is not stemmed (identifiers must stay exact), so a plain English word of
the query also gets a *stem prefix* term (``dependencies`` -> ``"depend"*``, ``fuzzily`` ->
``"fuzz"*``, ``defining`` -> ``"defin"*``): FTS5 expands it to every indexed word starting with
the stem. The exact word stays a term of its own, so the form the user typed scores twice.
A hyphenated prose chunk (``note-taking``, ``environment-variable``) is searched as a phrase
and as its separate words.

Text forms: the query is read in ``text.match_form`` (NFKC, invisible characters deleted;
tokens also case-folded and in ``text.keyword_form``: optional marks folded, emoji as words),
the form the keyword index holds, so a word typed decomposed (NFD ``piñata``), full-width,
with a soft hyphen or without Arabic harakat matches the document's spelling of it, and an
emoji finds the heading that is only that emoji.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..text import CJK_RUN, WORD, cjk_bigrams, is_cjk, keyword_form, match_form

MAX_TERMS = 48
_QUOTED = re.compile(r"\"([^\"]+)\"|`([^`]+)`")
# What makes a chunk an identifier rather than a word: snake_case, --flags, dotted or
# namespaced names, paths, camelCase, ALL_CAPS with digits or underscores, calls ``f()``.
_IDENT = re.compile(
    r"""(?x)
    ^-{1,2}[A-Za-z0-9][\w-]*$              # --flag, -x
    | ^\w+(?:[_.:/\\-]+\w+)+[\w()]*$       # snake_case, dotted.name, a::b, path/x, kebab-case-name
    | ^[a-z]+[A-Z]\w*$                     # camelCase
    | ^[A-Z][a-z]+[A-Z]\w*$                # PascalCase with a hump (HttpClient)
    | ^[A-Z0-9]{2,}\d*[A-Z0-9]*$           # ECONNRESET, HTTP2
    | ^\w+\(\)$                             # call()
    | ^[$@#][\w/.-]+$                       # $HOME/.config, @scope/pkg, #123
    """
)
STOPWORDS = frozenset(
    """a an and are as at be been but by can could do does did for from has have how i if in into is it
    its me my no not of on or our should so than that the their them then there these they this to
    was we what when where which who why will with would you your about any all also get use using
    used want need way make sure one more most other some such only own same just very""".split()
)


_PROSE_HYPHEN = re.compile(r"^[A-Za-z]+(?:-[A-Za-z]+)+$")


def looks_like_identifier(chunk: str) -> bool:
    """True for a chunk shaped like an identifier (``--flag``, ``snake_case``, ``a.b``,
    ``camelCase``, ``ECONNRESET``, ``f()``...), the same test the query analysis applies."""
    return bool(_IDENT.match(chunk))


def strong_chunk(chunk: str) -> bool:
    """True for a chunk that is code-like rather than hyphenated prose: anything but plain
    letters joined by single hyphens (``note-taking`` is prose; ``--dry-run``, ``os.path``,
    ``rook-ceph-v1`` are not). Hyphenated prose is searched as a phrase and as its words."""
    return not _PROSE_HYPHEN.match(chunk)


@dataclass
class Term:
    """One FTS5 term or phrase: ``tokens`` in order (lowercased), and whether it came from an
    identifier-like chunk (or a quoted string) of the query."""

    tokens: tuple[str, ...]
    identifier: bool = False
    raw: str = ""
    prefix: bool = False  # a stem: matches every indexed word that starts with tokens[0]

    def fts(self) -> str:
        return '"' + " ".join(self.tokens) + '"' + ("*" if self.prefix else "")

    def matches(self, words: set[str]) -> bool:
        """True when a text whose FTS tokens are ``words`` contains this term (phrase order
        is not checked)."""
        if self.prefix:
            return any(w.startswith(self.tokens[0]) for w in words)
        return all(tok in words for tok in self.tokens)


@dataclass
class AnalysedQuery:
    text: str
    terms: list[Term] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)  # identifier strings as typed (in match_form, case kept)
    quoted: list[str] = field(default_factory=list)  # quoted / backticked strings as typed (likewise)
    names: list[str] = field(default_factory=list)  # multi-word proper names ("Spring Cloud Gateway")
    cjk: bool = False

    def match_expression(self) -> str | None:
        """The FTS5 MATCH string, or None when the query has no searchable term."""
        if not self.terms:
            return None
        return " OR ".join(t.fts() for t in self.terms)


#: Suffixes stripped (longest first) to make a stem prefix; the stem keeps >= STEM_MIN letters.
_SUFFIXES = tuple(sorted(
    """encies ancies ency ancy ence ance ations ation ically ingly ities ility ously ively fully
    ements ement ments ment ness ings ing ies ied ily ers er ed ly es s ity ive ally al able ible
    y e""".split(), key=len, reverse=True))
STEM_MIN = 4
_ASCII_WORD = re.compile(r"^[a-z]+$")


@lru_cache(maxsize=8192)
def stem_prefix(word: str) -> str | None:
    """A prefix shared by the inflected and derived forms of an English ``word`` (lowercase):
    ``"dependencies"`` -> ``"depend"``, ``"exactly"`` -> ``"exact"``, ``"colors"`` -> ``"color"``.
    None for short words (< 5 letters), non-ASCII words and stopwords. The word itself is
    returned when no suffix can go (``"depend"``): as a prefix it still reaches ``depends``.
    Memoised: page naming asks it of every title word against every query word."""
    if len(word) < STEM_MIN + 1 or not _ASCII_WORD.match(word) or word in STOPWORDS:
        return None
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= STEM_MIN:
            return word[: -len(suffix)]
    return word


_NAME_RUN = re.compile(r"(?<![\w.\-/])[A-Z][A-Za-z0-9]*(?: [A-Z][A-Za-z0-9]*)+(?![\w\-/])")
_SENTENCE_START = re.compile(r"(^|[.?!;:。？！；：]\s*)$")


def proper_names(text: str) -> list[str]:
    """Runs of two or more Capitalised words that name a product or project ("Spring Cloud
    Gateway", "VS Code"). The first word of a sentence does not count as part of a name (it is
    capitalised anyway), nor does the pronoun "I"."""
    out = []
    for m in _NAME_RUN.finditer(text):
        words = m.group(0).split(" ")
        if _SENTENCE_START.search(text[: m.start()]):
            words = words[1:]
        while words and words[0] == "I":
            words = words[1:]
        if "I" in words:
            words = words[: words.index("I")]
        if len(words) >= 2:
            out.append(" ".join(words))
    return out


def _chunk_tokens(chunk: str) -> list[str]:
    """The keyword-index tokens of one query chunk, read as indexed text is (``keyword_form``)."""
    out: list[str] = []
    for word in WORD.findall(keyword_form(chunk)):
        pos = 0
        for m in CJK_RUN.finditer(word):
            if m.start() > pos:
                out.append(word[pos : m.start()])
            out.extend(cjk_bigrams(m.group(0)))
            pos = m.end()
        if pos < len(word):
            out.append(word[pos:])
    return out


def _strip_chunk(chunk: str) -> str:
    return chunk.strip(",;:!?'\"“”‘’()[]{}<>").rstrip(".")


def analyse(text: str) -> AnalysedQuery:
    """Analyse a raw query string (any content, any length), read in its ``match_form`` with
    case kept (see module docstring). Never raises."""
    text = match_form(text, fold_case=False)
    query = AnalysedQuery(text=text, cjk=is_cjk(text), names=proper_names(text))
    seen: set[tuple[str, ...]] = set()

    counts: dict[tuple[str, ...], int] = {}

    def add(tokens: list[str], identifier: bool, raw: str, prefix: bool = False) -> None:
        if not tokens:
            return
        key = (*tokens, "*") if prefix else tuple(tokens)
        counts[key] = counts.get(key, 0) + 1
        if key in seen:
            return
        seen.add(key)
        query.terms.append(Term(tuple(tokens), identifier, raw, prefix))

    stems: list[tuple[str, str]] = []  # (stem, word) added after every exact term

    def add_word(tok: str, raw: str) -> None:
        add([tok], False, raw)
        stem = stem_prefix(tok)
        if stem is not None:
            stems.append((stem, raw))

    rest = text
    for m in _QUOTED.finditer(text):
        inner = m.group(1) or m.group(2) or ""
        add(_chunk_tokens(inner), True, inner)
        if inner.strip():
            query.identifiers.append(inner.strip())
            query.quoted.append(inner)
    rest = _QUOTED.sub(" ", text)
    for raw_chunk in rest.split():
        chunk = _strip_chunk(raw_chunk)
        if not chunk:
            continue
        tokens = _chunk_tokens(chunk)
        if not tokens:
            continue
        ident = bool(_IDENT.match(chunk)) and not is_cjk(chunk)
        if ident:
            query.identifiers.append(chunk)
        if len(tokens) > 1 and (ident or not is_cjk(chunk)):
            add(tokens, ident, chunk)
            if not strong_chunk(chunk) and all(_ASCII_WORD.match(t) for t in tokens):
                for tok in tokens:  # prose joined by hyphens: its words count on their own too
                    if tok not in STOPWORDS:
                        add_word(tok, tok)
        elif len(tokens) > 1:  # a CJK run: bigram phrase, plus each bigram for partial matches
            add(tokens, False, chunk)
            for tok in tokens:
                add([tok], False, tok)
        else:
            tok = tokens[0]
            if not ident and tok in STOPWORDS:
                continue
            if ident:
                add([tok], ident, chunk)
            else:
                add_word(tok, chunk)
    for stem, raw in stems:
        add([stem], False, raw, prefix=True)
    if not query.terms:  # only stopwords: search them rather than nothing
        for raw_chunk in rest.split():
            add(_chunk_tokens(_strip_chunk(raw_chunk)), False, raw_chunk)
    query.terms = _strongest(query.terms, counts)
    return query


def _term_key(term: Term) -> tuple[str, ...]:
    return (*term.tokens, "*") if term.prefix else term.tokens


def _strongest(terms: list[Term], counts: dict[tuple[str, ...], int]) -> list[Term]:
    """At most ``MAX_TERMS`` of ``terms``, in query order. A long query (a pasted log, a
    paragraph) keeps its most telling terms wherever they stand, never just its first ones:
    exact terms before stem prefixes, identifiers made of words (``ERR_CACHE_LOCK_7781``,
    ``max_inflight_batches``) before plain words, words before number-like terms (timestamps,
    ids, counts), and a term written once before one repeated on every line of a log."""
    if len(terms) <= MAX_TERMS:
        return terms

    def strength(item: tuple[int, Term]) -> tuple[bool, bool, bool, int, int]:
        at, term = item
        worded = sum(ch.isalpha() for ch in term.raw) > sum(ch.isdigit() for ch in term.raw)
        return (not term.prefix, worded and term.identifier, worded, -counts.get(_term_key(term), 1), -at)

    kept = sorted(enumerate(terms), key=strength, reverse=True)[:MAX_TERMS]
    return [term for _at, term in sorted(kept, key=lambda item: item[0])]
