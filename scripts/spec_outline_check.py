"""Outline titles against the headings CommonMark itself finds, over every example of the
CommonMark spec and the GFM spec (tests/fixtures/spec/, see SOURCE.md there).

For each example, the expected headings are the ``<h1>``..``<h6>`` of the spec's HTML, as plain
text (tags dropped, entities decoded, an image's alt text kept, ``<br />`` as a space,
whitespace runs as one space); ours are the titles of the example's sections as
``parse_document`` makes them (the preamble excluded). An example matches when both lists are
equal. tests/test_spec_outline.py holds the allow-list of mismatches that are right.

Usage: python scripts/spec_outline_check.py [--list]   (prints ``<spec>: N/M match (...)``;
``--list`` adds every mismatch)
"""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT / "tests" / "fixtures" / "spec"
SPECS = {"CommonMark": SPEC_DIR / "commonmark.json", "GFM": SPEC_DIR / "gfm.json"}


class _Headings(HTMLParser):
    """Plain text of every h1-h6 of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.titles: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._open = []
        elif self._open is not None and tag == "img":
            self._open.append(dict(attrs).get("alt") or "")
        elif self._open is not None and tag == "br":
            self._open.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._open is not None:
            self.titles.append(" ".join("".join(self._open).split()))
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


def expected_titles(html: str) -> list[str]:
    parser = _Headings()
    parser.feed(html)
    parser.close()
    return parser.titles


def our_titles(markdown: str) -> list[str]:
    from markdown_memory.markdown.parse import UNTITLED, parse_document

    doc = parse_document(markdown, "example.md")
    return ["" if s.title == UNTITLED else s.title for s in doc.sections if s.level > 0 and s.part <= 1]


def check(spec: str) -> tuple[int, int, list[tuple[int, list[str], list[str]]]]:
    """(number of examples, number of them whose HTML has a heading, [(example number,
    expected titles, our titles)] of the examples that differ)."""
    examples = json.loads(SPECS[spec].read_text(encoding="utf-8"))
    out = []
    with_headings = 0
    for ex in examples:
        want, got = expected_titles(ex["html"]), our_titles(ex["markdown"])
        with_headings += bool(want)
        if want != got:
            out.append((ex["example"], want, got))
    return len(examples), with_headings, out


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    for spec in SPECS:
        total, with_headings, bad = check(spec)
        bad_headings = sum(1 for _, want, _ in bad if want)
        print(f"{spec}: {total - len(bad)}/{total} match"
              f" ({with_headings - bad_headings}/{with_headings} of the examples with headings)")
        if "--list" in argv:
            for number, want, got in bad:
                print(f"  example {number}: spec {want!r} ours {got!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
