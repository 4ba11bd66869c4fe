"""Property tests for the one matching form of text (``text.match_form``, issue 13): for
generated documents whose headings and words come in random Unicode forms (NFC or NFD) with
invisible format characters inside words (soft hyphen, zero-width space / non-joiner / joiner,
word joiner, BOM), every heading of the outline reads back by its breadcrumb retyped in NFC, in
NFD or without the invisible characters, and a keyword-only search restricted to the file finds
every word, typed in either form; generated file names (spaces, ``#``, ``%``, brackets, NFC or
NFD) open by their name in either form and by their percent-encoded link destination.
"""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.errors import SectionNotFoundError
from markdown_memory.models import SearchRequest
from markdown_memory.reading.resolve import resolve_heading
from markdown_memory.text import fts_text, match_form

INVISIBLES = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
# letters with and without precomposed accents, so NFD really decomposes some of them
LETTERS = "abcdefghijklmnopqrstuvwxyzéèêëñüöçåàáíóúâîôûãõŕśźǹḿ"
FORMS = ("NFC", "NFD")

PLAIN = st.text(alphabet=LETTERS, min_size=3, max_size=9)


@st.composite
def spelled(draw, plain: str | None = None) -> tuple[str, str]:
    """(plain NFC word, the same word as a document or a user might spell it)."""
    word = unicodedata.normalize("NFC", plain if plain is not None else draw(PLAIN))
    form = draw(st.sampled_from(FORMS))
    out = unicodedata.normalize(form, word)
    if draw(st.booleans()):
        cut = draw(st.integers(1, len(out) - 1))
        out = out[:cut] + draw(st.sampled_from(INVISIBLES)) + out[cut:]
    return word, out


def strip_invisible(text: str) -> str:
    return "".join(ch for ch in text if ch not in INVISIBLES)


RETYPES = (
    lambda s: unicodedata.normalize("NFC", s),
    lambda s: unicodedata.normalize("NFD", s),
    strip_invisible,
    lambda s: unicodedata.normalize("NFC", strip_invisible(s)),
    lambda s: unicodedata.normalize("NFD", strip_invisible(s)).upper(),
)


@st.composite
def documents(draw) -> tuple[str, list[str]]:
    """(Markdown text, the plain NFC words it holds)."""
    words: list[str] = []
    lines: list[str] = []
    for k in range(draw(st.integers(1, 5))):
        level = 1 if k == 0 else draw(st.integers(2, 3))
        title = [draw(spelled()) for _ in range(draw(st.integers(1, 3)))]
        body = [draw(spelled()) for _ in range(draw(st.integers(1, 6)))]
        words += [w for w, _ in title + body]
        lines += ["#" * level + " " + " ".join(s for _, s in title), "", " ".join(s for _, s in body), ""]
    return "\n".join(lines), words


def _engine(root: Path) -> Engine:
    return Engine(Settings.load(root, root.parent / "index.db", "none", auto_index=False))


# -- the rule itself -------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.lists(spelled(), min_size=1, max_size=6), st.sampled_from(FORMS))
def test_match_form_is_one_form_for_every_spelling(pairs, form):
    plain = " ".join(w for w, _ in pairs)
    typed = " ".join(s for _, s in pairs)
    assert match_form(typed) == match_form(plain) == match_form(unicodedata.normalize(form, plain.upper()))
    assert match_form(match_form(typed)) == match_form(typed)
    assert not any(ch in match_form(typed) for ch in INVISIBLES)
    assert fts_text(typed).split() == fts_text(plain).split()
    # case kept when asked
    assert match_form(typed, fold_case=False) == unicodedata.normalize("NFKC", plain)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(spelled(), min_size=1, max_size=3), min_size=1, max_size=6, unique_by=lambda t: " ".join(w for w, _ in t).casefold()),
       st.data())
def test_breadcrumbs_resolve_in_any_form_and_misses_never_offer_a_lookalike(titles, data):
    available = ["Root > " + " ".join(s for _, s in title) for title in titles]
    for path, title in zip(available, titles):
        retype = data.draw(st.sampled_from(RETYPES))
        assert resolve_heading(retype(path), available) == path
        assert resolve_heading(" ".join(w for w, _ in title), available) == path  # trailing fragment, plain
    # a miss lists the nearest breadcrumbs, none of them the request in another spelling
    missing = "Root > " + " ".join(w for w, _ in titles[0]) + " qqxzv"
    try:
        resolve_heading(missing, available)
    except SectionNotFoundError as exc:
        assert len({match_form(c) for c in exc.candidates}) == len(exc.candidates)
        assert match_form(missing) not in {match_form(c) for c in exc.candidates}


# -- through the engine --------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_every_heading_reads_back_retyped_and_every_word_is_found(doc, data):
    text, words = doc
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        root.mkdir()
        (root / "doc.md").write_text(text, encoding="utf-8")
        engine = _engine(root)
        try:
            engine.index()
            headings = [h.heading_path for h in engine.outline("doc.md").headings]
            assert headings
            for path in headings:
                for retype in RETYPES:
                    assert engine.read("doc.md", retype(path)).heading_path == path, (retype(path), headings)
            for word in set(words):
                typed = unicodedata.normalize(data.draw(st.sampled_from(FORMS)), word)
                hits = engine.search(SearchRequest(typed, path_prefix="doc.md", top_k=10)).results
                # found: a hit whose section holds the word in its text or its breadcrumb
                assert any(match_form(word) in match_form(f"{h.heading_path}\n{h.content or h.preview}")
                           for h in hits), (typed, text)
        finally:
            engine.close()


NAME_CHARS = LETTERS + " #%&[]()'+-_"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=NAME_CHARS, min_size=1, max_size=12).map(str.strip).filter(lambda n: n and n[0] not in ".#"),
                min_size=1, max_size=3, unique_by=lambda n: match_form(n)),
       st.data())
def test_file_names_open_in_either_form_and_as_link_destinations(names, data):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        (root / "sub").mkdir(parents=True)
        on_disk = []
        for k, name in enumerate(names):
            disk = "sub/" + unicodedata.normalize(data.draw(st.sampled_from(FORMS)), name) + ".md"
            (root / disk).write_text(f"# Page {k}\n\nbody {k}\n", encoding="utf-8")
            on_disk.append(disk)
        engine = _engine(root)
        try:
            engine.index()
            for disk in on_disk:
                for typed in (unicodedata.normalize("NFC", disk), unicodedata.normalize("NFD", disk),
                              quote(unicodedata.normalize("NFC", disk)), "./" + quote(disk) + "#page"):
                    assert engine.outline(typed).file_path == disk, (typed, on_disk)
        finally:
            engine.close()
