"""Convert the GFM spec's text (``spec.txt`` of github/cmark-gfm, as shipped in the marko sdist
at ``tests/spec/gfm.txt``) into the JSON list the CommonMark project publishes
(``markdown``, ``html``, ``example``, ``start_line``, ``end_line``, ``section``) plus
``extension`` (``table``, ``strikethrough``, ...; ``""`` for core examples). The spec writes a
tab as ``→``; it is turned back into a tab, as the spec's own test runner does.

Usage: python scripts/vendor_gfm_spec.py gfm.txt tests/fixtures/spec/gfm.json
"""

from __future__ import annotations

import json
import re
import sys

FENCE = "`" * 32


def examples(text: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    section = ""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(FENCE + " example"):
            extension = line[len(FENCE + " example"):].strip()
            start = i + 1
            i += 1
            md: list[str] = []
            while lines[i] != ".":
                md.append(lines[i] + "\n")
                i += 1
            i += 1
            html: list[str] = []
            while lines[i] != FENCE:
                html.append(lines[i] + "\n")
                i += 1
            out.append({
                "markdown": "".join(md).replace("\u2192", "\t"),
                "html": "".join(html).replace("\u2192", "\t"),
                "example": len(out) + 1, "start_line": start, "end_line": i + 1,
                "section": section, "extension": extension,
            })
        elif re.match(r"^#{1,6} ", line):
            section = re.sub(r"^#{1,6} ", "", line).strip()
        i += 1
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        data = examples(f.read())
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(data)} examples")
