"""Docs roots of N copies of a corpus for the scale benchmark (scripts/bench_scale.py).

Copy 0 is the corpus as is (so the dev queries still have their answers under the original
paths); copy ``i >= 1`` lives under renamed top-level folders (``httpx`` -> ``httpx-c01``) and
has about one in four words of seven or more letters changed, deterministically per copy and
word (its last letter replaced by one chosen from a CRC of copy number and word), so no two
copies of a file are byte-identical and their keywords and vectors differ a little, as
near-duplicate docs of a large docs root do. Files that are not UTF-8 are copied unchanged.
"""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

_WORD = re.compile(r"\b[A-Za-z]{7,}\b")
MARKER = ".scale-root"


def perturb(text: str, copy: int) -> str:
    """``text`` with about a quarter of its words of 7+ ASCII letters changed for copy ``copy``
    (copy 0: unchanged). Deterministic; line structure and Markdown syntax are kept."""
    if copy == 0:
        return text

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        h = zlib.crc32(f"{copy}:{word}".encode())
        if h % 4:
            return word
        letter = chr(ord("a") + (h >> 8) % 26)
        return word[:-1] + (letter.upper() if word[-1].isupper() else letter)

    return _WORD.sub(swap, text)


def build_root(corpus: Path, dest: Path, copies: int) -> Path:
    """Write ``copies`` copies of ``corpus`` into ``dest`` (reused when a previous build of the
    same size is complete: ``dest/.scale-root`` holds the copy count). Returns ``dest``."""
    marker = dest / MARKER
    if marker.is_file() and marker.read_text().strip() == str(copies):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for copy in range(copies):
        suffix = f"-c{copy:02d}" if copy else ""
        for src in sorted(corpus.rglob("*")):
            if not src.is_file() or src.is_symlink():
                continue
            rel = src.relative_to(corpus)
            parts = (rel.parts[0] + suffix,) + rel.parts[1:] if len(rel.parts) > 1 else rel.parts
            if len(rel.parts) == 1 and copy:
                continue  # top-level files (SOURCES.md) once
            out = dest.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            data = src.read_bytes()
            try:
                out.write_text(perturb(data.decode("utf-8"), copy), encoding="utf-8", newline="")
            except UnicodeDecodeError:
                out.write_bytes(data)
    marker.write_text(str(copies))
    return dest
