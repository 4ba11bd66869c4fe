"""Every text rule shared by more than one stage, in one place.

* Character classes: ``CJK_RUN`` (ideographs, kana, hangul: what the keyword index splits into
  bigrams), ``WIDE`` (characters a BPE tokenizer spends about one token on), ``WORD`` (a run
  of letters or digits, no underscore), ``HTML_TAG``.
* Keyword-index text (:func:`fts_text`): the matching form (below), then: FTS5's ``unicode61`` tokenizer treats a run of CJK
  characters as one token, so Chinese or Japanese words inside a sentence could never match.
  Before text enters the index (and before a query is built) every CJK run becomes its
  overlapping character bigrams (``数据库迁移`` -> ``数据 据库 库迁 迁移``; one character stays
  itself): the bigram scheme of Lucene's CJKAnalyzer, which matches 2-character queries that a
  trigram index cannot. Latin text is unchanged, so identifiers keep working; displayed text is
  never rewritten, only the indexed copy. Before that, :func:`keyword_form` folds optional
  marks (Arabic harakat, Hebrew points, accents: a word typed without them matches) and makes
  each emoji a word (``🚧`` -> ``u1f6a7``); the query's terms go through the same function.
* Matching form (:func:`match_form`): the one rule for "is this the same text?", applied to
  both sides of every comparison (keyword index and query, typed and indexed breadcrumbs, typed
  and indexed paths, identifiers and section text) and never to text shown back. The same
  visible text reaches the index in several spellings: macOS writes ``é`` decomposed (NFD)
  where keyboards type it composed (NFC); converters leave invisible format characters inside
  words (``con\u00adfig``, ``data\u200bbase``, ``time\u2060out``); full-width and ligature
  forms (``ＡＢＣ``, ``ﬁle``) stand for plain letters. The rule: (1) delete every
  Default_Ignorable_Code_Point (Unicode's "renders as nothing" set: soft hyphen, zero-width
  space / non-joiner / joiner, word joiner, BOM, bidi marks and controls, invisible operators,
  variation selectors, tags; visible format characters such as the Arabic number signs stay),
  so a word split by one is one word again; (2) normalize to NFKC (compatibility composition:
  NFD and NFC spellings become one, ``ﬁ`` -> ``fi``, full-width -> ASCII, no-break spaces ->
  spaces); (3) case-fold (``str.casefold``: ``Straße`` ~ ``strasse``) unless the comparison is
  case-sensitive, then NFKC again (folding can decompose). This is ICU's NFKC_Casefold without
  its extra foldings. Changing it changes what the keyword index holds: bump
  ``store.schema.SCHEMA_VERSION`` so existing databases rebuild their keyword index.
* Text from outside (:func:`decode_outside`): the one decoding rule for every text that comes
  from outside (argv, stdin, files, JSON) and is not a file-system path. Python hands over bytes
  that are not valid UTF-8 as lone surrogates (``surrogateescape``: ``caf\\xff`` ->
  ``caf\\udcff``), and JSON can spell a lone surrogate (``"\\ud800"``); neither can be encoded,
  so SQLite, the tokenizer or a print would fail deep inside. The rule: the original bytes are
  decoded as UTF-8 and each byte sequence that is not UTF-8 becomes one U+FFFD (the WHATWG/
  Python ``replace`` decoding), so ``caf\\xff`` is searched as ``caf\ufffd``; valid text is returned
  unchanged.
* Token counts (:func:`count_tokens`): one documented estimate used everywhere (budgets,
  outlines, reports). The agent's tokenizer is unknown (Claude, GPT and Gemini differ) and
  counting must be cheap at index time, so: each wide character counts 1 token, every other
  run ``ceil(chars / 4)`` tokens, the rule of thumb OpenAI publishes for English ("one token
  ~= 4 characters", help.openai.com, "What are tokens"). It over-counts code slightly, the
  safe side for a budget.
* Inline ``data:`` URIs (:func:`elide_data_uris`): a base64 image pasted into a note is
  megabytes of characters no reader or search wants (one 2.5 MB image became 1,222 embedded
  chunks elsewhere). Its payload is replaced by ``…`` before a file is parsed, so sections,
  keyword rows, passages and ``read`` answers carry ``data:image/png;base64,…`` instead: the one
  place where stored text is not the verbatim source. Line breaks are never touched, so line
  numbers stay those of the file.
* Heading slugs (:func:`heading_slug`): the anchor a heading gets in GitHub, Obsidian's and
  Dendron's links (``## Hook Create!`` -> ``hook-create``), how links name headings; their
  document-wide numbering (:func:`heading_slugs`: the 2nd ``Install`` is ``install-1``).
* The ``LIKE`` escape (:func:`like_escape`, for tag names), and the one-clause cause of
  a long error message (:func:`short_cause`).
* A path in text output (:func:`shown_path`): one printable line, each character that is not
  printable percent-escaped as the docs map's links write it (``new\nline.md`` ->
  ``new%0Aline.md``); ``read`` accepts that spelling back (a link destination).
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from collections.abc import Iterable

__all__ = [
    "CJK_RUN",
    "HTML_TAG",
    "WIDE",
    "WORD",
    "cjk_bigrams",
    "decode_outside",
    "elide_data_uris",
    "count_tokens",
    "fts_text",
    "heading_slug",
    "heading_slugs",
    "is_cjk",
    "keyword_form",
    "like_escape",
    "glob_escape",
    "match_form",
    "short_cause",
]

#: a run of CJK ideographs, kana or hangul syllables
CJK_RUN = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
#: one character that BPE tokenizers spend about one token on (CJK, hangul jamo, full-width forms)
WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
#: a word: a run of letters or digits (underscore splits words)
WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: an HTML or JSX tag, opening or closing (no nesting of ``<`` inside)
HTML_TAG = re.compile(r"<[^<>]*>")

#: Unicode's Default_Ignorable_Code_Point set (DerivedCoreProperties.txt, Unicode 15),
#: including its unassigned reserved code points: what match_form deletes
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
#: Combining marks a writer may leave out without changing the word (checked after NFD), so
#: the keyword index folds them on both sides: Latin/Greek/Cyrillic accents (U+0300-U+036F),
#: Hebrew points and cantillation, Arabic harakat, Quranic marks and the superscript alef.
#: Marks that spell a different word (Indic vowel signs, Thai tone marks) are kept.
OPTIONAL_MARKS = re.compile(
    "[\u0300-\u036f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\U0001f3fb-\U0001f3ff]+"
)
#: Pictographs (category So in these blocks) the keyword index reads as words (``keyword_form``):
#: unicode61 reads symbols as separators, so an emoji-only heading (``## 🚧``) had no word at all.
EMOJI = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")
#: a ``data:`` URI with a base64 payload of at least 32 characters, or any other payload
#: (percent-encoded SVG...) of at least 256; group 1 is the ``data:<type>[;params][;base64],``
#: head that is kept. Payloads stop at whitespace, quotes, ``)`` and ``>``.
DATA_URI = re.compile(
    r"(data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+%-]+)*(?:;base64,(?=[A-Za-z0-9+/=_-]{32})|,(?=[^\s\"'()<>]{256})))"
    r"[^\s\"'()<>]+"
)
#: what replaces a data URI's payload
DATA_URI_PLACEHOLDER = "…"

#: short_cause keeps at most this many characters
CAUSE_CHARS = 200


def is_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK ideograph, kana or hangul syllable."""
    return CJK_RUN.search(text) is not None


def cjk_bigrams(run: str) -> list[str]:
    """``"数据库"`` -> ``["数据", "据库"]``; a single character -> ``[it]``."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def match_form(text: str, *, fold_case: bool = True) -> str:
    """The form in which two texts are compared (see module docstring): invisible
    (default-ignorable) characters deleted, NFKC, case-folded unless ``fold_case`` is False.
    Idempotent; ``"Cafe\u0301 Con\u00adfig"`` -> ``"café config"``. Never shown to a user."""
    if text.isascii():  # the common case: nothing to delete or compose
        return text.casefold() if fold_case else text
    out = unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
    if fold_case:
        out = unicodedata.normalize("NFKC", out.casefold())
    return out


def _emoji_word(m: re.Match[str]) -> str:
    return f" u{ord(m.group(0)):x} " if unicodedata.category(m.group(0)) == "So" else m.group(0)


def keyword_form(text: str) -> str:
    """``text`` as the keyword index reads words (index and query alike): its ``match_form``
    with optional marks folded (``OPTIONAL_MARKS``: ``مَرْحَبًا`` -> ``مرحبا``, ``café`` ->
    ``cafe``) and each emoji a word of its own (``🚧`` -> `` u1f6a7 ``; skin-tone modifiers
    dropped). Latin only keeps what FTS5's ``remove_diacritics`` would fold anyway."""
    out = match_form(text)
    if out.isascii():
        return out
    decomposed = unicodedata.normalize("NFD", out)
    if OPTIONAL_MARKS.search(decomposed):
        out = unicodedata.normalize("NFC", OPTIONAL_MARKS.sub("", decomposed))
    return EMOJI.sub(_emoji_word, out) if EMOJI.search(out) else out


def fts_text(text: str) -> str:
    """The copy of ``text`` stored in (and searched against) the keyword index: its
    ``keyword_form``, with CJK runs as spaced bigrams (see module docstring)."""
    return CJK_RUN.sub(lambda m: " " + " ".join(cjk_bigrams(m.group(0))) + " ", keyword_form(text))


def elide_data_uris(text: str) -> str:
    """``text`` with the payload of every long ``data:`` URI replaced by ``…`` (see module
    docstring): ``![x](data:image/png;base64,iVBOR...)`` -> ``![x](data:image/png;base64,…)``.
    Linear in ``len(text)``; text without ``data:`` is returned as is."""
    if "data:" not in text:
        return text
    return DATA_URI.sub(lambda m: m.group(1) + DATA_URI_PLACEHOLDER, text)


def count_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (see module docstring). Returns >= 0; ``""`` -> 0."""
    if not text:
        return 0
    wide = len(WIDE.findall(text))
    rest = len(text) - wide
    return wide + (rest + 3) // 4


_SLUG_DROP = re.compile(r"[^\w\- ]")


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def decode_outside(text: str) -> str:
    """``text`` from outside (an argument, stdin, a file, a JSON string) as encodable text: lone
    surrogates (from ``surrogateescape`` or a JSON escape) are turned back into their bytes and
    decoded as UTF-8 with each invalid sequence replaced by U+FFFD. Never raises; text without
    lone surrogates is returned as is (the same object)."""
    if not _SURROGATE.search(text):
        return text
    raw = bytearray()
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: one undecodable byte
            raw.append(code - 0xDC00)
        else:  # any other lone surrogate becomes bytes that are not UTF-8 either
            raw += ch.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def heading_slug(text: str) -> str:
    """GitHub's anchor for a heading titled ``text``, in ``match_form``: punctuation other than
    ``-`` and ``_`` dropped, each space a ``-`` (``Hook Create!`` -> ``hook-create``)."""
    return _SLUG_DROP.sub("", match_form(text).strip()).replace(" ", "-")


def heading_slugs(titles: Iterable[str]) -> list[str]:
    """The anchors of a document's headings ``titles`` (in file order), numbered document-wide
    as GitHub, mdBook and markdown-it-anchor number them: a slug already taken gets ``-1``,
    ``-2``... (``Install``, ``Usage``, ``Install`` -> ``install``, ``usage``, ``install-1``),
    skipping a number another heading's own slug took (``Install 1``)."""
    taken: dict[str, int] = {}
    out = []
    for title in titles:
        base = slug = heading_slug(title)
        while slug in taken:
            taken[base] += 1
            slug = f"{base}-{taken[base]}"
        taken[slug] = 0
        out.append(slug)
    return out


def shown_path(path: str) -> str:
    """``path`` (a file name, or a title or tag shown beside it) as text output prints it: one
    line, each character that is not printable (newline, tab, other controls, a non-ASCII
    space, a lone surrogate) written as the percent-escapes of its UTF-8 bytes, the form the
    docs map's links use (``new\nline.md`` -> ``new%0Aline.md``). Printable text is unchanged."""
    if path.isprintable():
        return path
    return "".join(ch if ch.isprintable() else urllib.parse.quote(ch, safe="", errors="surrogateescape")
                   for ch in path)


def like_escape(text: str) -> str:
    """``text`` with ``\\``, ``%`` and ``_`` escaped for ``LIKE ? ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def glob_escape(text: str) -> str:
    """``text`` with ``*``, ``?`` and ``[`` bracketed for SQLite's ``GLOB``, which compares code
    point by code point (``LIKE`` folds ASCII case: ``API`` would match ``api``)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def short_cause(message: str, limit: int = CAUSE_CHARS) -> str:
    """The first clause of a long error message (up to the first ``;``), at most ``limit``
    characters: what rides on every answer, while the full text stays in ``status``."""
    return message.split(";")[0][:limit]


def human_size(n: int, *, exact: bool = False) -> str:
    """A size in bytes as a person reads it, in decimal units (10^3, 10^6, as ``--max-file-mb``):
    ``999 bytes``, ``2.5 KB``, then MB from 0.1 MB (``0.9 MB``, ``12.3 MB``); ``exact`` (a limit someone set) shows every
    significant digit instead of one decimal (``10 MB``, ``1.5 MB``)."""
    if n < 1000:
        return "1 byte" if n == 1 else f"{n} bytes"
    value, unit = (n / 1e3, "KB") if n < 100_000 else (n / 1e6, "MB")
    return f"{value:g} {unit}" if exact else f"{value:.1f} {unit}"
