"""Property tests of issue 13 over generated documents that mix what real files do to the parser:
lists and block quotes nested past markdown-it's limit, inline markup in headings (links, code
spans, emphasis, images, escapes, entities, inline HTML), Unicode words in NFC and NFD,
zero-width characters, huge lines and tables. Invariants a user relies on:

- every non-blank source line lies in exactly one section (parser);
- every heading of an outline reads back by its own breadcrumb (``Engine.outline`` /
  ``Engine.read``), and by the heading's raw Markdown copied from the file;
- every word of the file is found by a keyword-only search restricted to that file.

Engine checks use one keyword-only engine per test over a docs root whose one file is rewritten
per example (an incremental run each time), so examples stay cheap.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.markdown.parse import parse_document, split_lines
from markdown_memory.models import SearchRequest
from markdown_memory.text import WORD

# Words that no stemmer, stop-word list or identifier rule treats specially; accented ones are
# written in NFC and NFD (macOS file names and converter output use NFD).
PLAIN_WORDS = ["zorblat", "quindle", "frapset", "mervick", "tolquin", "baxtern", "yuvelo", "drimsk",
               "kestrum", "plovane", "ostrige", "wembric", "Grüße", "naïveté", "smørbrød", "Ærøskøbing",
               "東京都", "données", "crème", "Straße"]
WORDS = st.sampled_from(PLAIN_WORDS).flatmap(
    lambda w: st.sampled_from(sorted({unicodedata.normalize("NFC", w), unicodedata.normalize("NFD", w)})))
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad"]
# A word with an invisible format character inside it (converter output: soft hyphens, ZWSP).
SPLIT_WORD = st.builds(lambda w, c, k: w[:k] + c + w[k:], st.sampled_from(PLAIN_WORDS[:12]),
                       st.sampled_from(INVISIBLE), st.integers(2, 4))


def _inline(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """One piece of inline Markdown around ``word``, as headings in the wild have them."""
    return st.one_of(
        word,
        word.map(lambda w: f"`{w}`"),
        word.map(lambda w: f"**{w}**"),
        word.map(lambda w: f"*{w}*"),
        word.map(lambda w: f"~~{w}~~"),
        st.tuples(word, word).map(lambda p: f"[{p[0]}](https://example.com/{p[1]})"),
        word.map(lambda w: f"![{w}](img/{w}.png)"),
        word.map(lambda w: f"\\*{w}\\*"),
        word.map(lambda w: f"{w} &amp; {w}"),
        word.map(lambda w: f"<kbd>{w}</kbd>"),
    )


def _title(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(_inline(word), min_size=1, max_size=4).map(" ".join)


def _heading(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda n, t: f"{'#' * n} {t}", st.integers(1, 6), _title(word)),
        st.builds(lambda t, u: f"{t}\n{u * 3}", _title(word), st.sampled_from(["=", "-"])),
    )


def _deep_list(words: list[str], depth: int) -> str:
    return "\n".join("  " * i + f"- {words[i % len(words)]}" for i in range(depth))


def _deep_quote(words: list[str], depth: int) -> str:
    return "\n".join(">" * (i + 1) + f" {words[i % len(words)]}" for i in range(depth))


def _block(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    words = st.lists(word, min_size=1, max_size=8)
    depth = st.sampled_from([1, 3, 12, 25, 60, 105, 230])
    return st.one_of(
        _heading(word),
        words.map(" ".join),
        st.builds(_deep_list, words, depth),
        st.builds(_deep_quote, words, depth),
        st.builds(lambda ws, n: "| a | b |\n| --- | --- |\n" + "\n".join(f"| {w} | `{w}|x` |" for w in ws * n),
                  words, st.integers(1, 40)),
        # a huge line: 200-600 repeats of 1-8 words is 1.4-40 KB, past the passage (600 characters)
        # and section (800 tokens) limits, so it is split; longer lines only took longer
        st.builds(lambda ws, n: " ".join(ws * n), words, st.integers(200, 600)),
        words.map(lambda ws: "```\n" + "\n".join(ws) + "\n```"),
        words.map(lambda ws: "<div>\n" + " ".join(ws) + "\n</div>"),
    )


def _doc(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(lambda blocks, sep: sep.join(blocks), st.lists(_block(word), min_size=1, max_size=12),
                     st.sampled_from(["\n\n", "\n", "\r\n\r\n"]))


NFC_WORDS = st.sampled_from([unicodedata.normalize("NFC", w) for w in PLAIN_WORDS])
DOC = _doc(WORDS)
NFC_DOC = _doc(NFC_WORDS)
DOC_WITH_INVISIBLE = _doc(st.one_of(WORDS, SPLIT_WORD))


def assert_every_line_in_one_section(text: str) -> None:
    doc = parse_document(text, "doc.md")
    for i, line in enumerate(split_lines(text), start=1):
        if line.strip():
            owners = [s for s in doc.sections if s.start_line <= i <= s.end_line]
            assert len(owners) == 1, (i, line[:80], len(owners))
    for s in doc.sections:
        assert s.level == 0 or s.title, s


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOC_WITH_INVISIBLE)
def test_every_non_blank_line_lies_in_exactly_one_section(text):
    assert_every_line_in_one_section(text)


@pytest.fixture(scope="module")
def keyword_engine(tmp_path_factory):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    base = tmp_path_factory.mktemp("props")
    root = base / "docs"
    root.mkdir()
    engine = Engine(Settings.load(root, base / "index.db", "none"))
    yield engine, root
    engine.close()


def _index(keyword_engine, text: str):
    engine, root = keyword_engine
    (root / "doc.md").write_text(text, encoding="utf-8", newline="")
    report = engine.index()
    assert not report.failed, report.failed
    return engine


def _raw_headings(text: str) -> dict[int, str]:
    """1-based line -> the heading as written in the source (ATX ``#`` marks dropped)."""
    out = {}
    lines = split_lines(text)
    for s in parse_document(text, "doc.md").sections:
        if s.level and s.part <= 1:
            line = lines[s.start_line - 1].strip()
            out[s.start_line] = line.lstrip("#").strip() if line.startswith("#") else line
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(DOC)
def test_every_outline_heading_reads_back_by_its_breadcrumb(keyword_engine, text):
    engine = _index(keyword_engine, text)
    headings = engine.outline("doc.md").headings
    raw = _raw_headings(text)
    for h in headings:
        section = engine.read("doc.md", h.heading_path)
        assert section.start_line == h.start_line, (h.heading_path, section.start_line, h.start_line)
    # The raw Markdown of a heading with a unique title, copied from the file, finds it too.
    titles = [h.title for h in headings]
    for h in headings:
        written = raw.get(h.start_line)
        if written and titles.count(h.title) == 1 and "\n" not in written:
            assert engine.read("doc.md", written).start_line == h.start_line, (written, h.heading_path)


def _visible_words(text: str) -> set[str]:
    """The words a reader sees, spelled as in the file: runs of letters and digits with their
    combining marks (NFD accents) and the invisible format characters inside them."""
    out, current = set(), []
    for ch in text + " ":
        if ch.isalnum() or unicodedata.category(ch) in ("Mn", "Mc", "Cf"):
            current.append(ch)
        else:
            word = "".join(current).strip("".join(INVISIBLE))
            if WORD.search(word):
                out.add(word)
            current = []
    return out


def _assert_words_found(keyword_engine, text: str, retype=lambda w: w) -> None:
    engine = _index(keyword_engine, text)
    for word in sorted(_visible_words(text)):
        hits = engine.search(SearchRequest(retype(word), path_prefix="doc.md", top_k=1)).results
        assert hits and hits[0].file_path == "doc.md", (word, retype(word))


def _visible(word: str) -> str:
    """How a reader retypes ``word``: NFC, without invisible format characters."""
    return unicodedata.normalize("NFC", "".join(ch for ch in word if unicodedata.category(ch) != "Cf"))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(NFC_DOC)
def test_every_word_of_the_file_is_found_by_a_keyword_search_of_that_file(keyword_engine, text):
    _assert_words_found(keyword_engine, text)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(DOC)
def test_every_nfd_or_nfc_word_is_found_typed_as_in_the_file(keyword_engine, text):
    _assert_words_found(keyword_engine, text)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(DOC_WITH_INVISIBLE)
def test_every_word_is_found_by_its_visible_spelling(keyword_engine, text):
    _assert_words_found(keyword_engine, text, retype=_visible)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(DOC_WITH_INVISIBLE, st.sampled_from(["NFC", "NFD", "visible"]))
def test_every_heading_reads_back_by_its_breadcrumb_retyped(keyword_engine, text, form):
    engine = _index(keyword_engine, text)
    for h in engine.outline("doc.md").headings:
        typed = _visible(h.heading_path) if form == "visible" else unicodedata.normalize(form, h.heading_path)
        assert engine.read("doc.md", typed).start_line == h.start_line, (form, h.heading_path)
