#!/usr/bin/env python3
"""Check corpus3 query files (writer b) against the documents in eval/corpus3.

Stdlib only. Usage:
    python3 eval/check_queries_b.py [FILE.jsonl ...]
    python3 eval/check_queries_b.py --outline eval/corpus3/ja/src/ch03-01-variables-and-mutability.md

Rules checked for every query line:
- the line is a JSON object with exactly the keys id, query, type, lang, expect;
- ids are unique across all files given;
- type is one of the known types, lang is "en" or "ja";
- type "negative" has expect == [], every other type has 1-3 expects;
- each expect has path (relative to eval/corpus3, file exists), line (int), heading (str);
- heading is an ATX heading line of that file with exactly that text (after the
  #'s, closing #'s and surrounding blanks removed), or, for text before the
  file's first heading, the front-matter `title` if there is one, else the file stem;
- line falls inside that heading's own section: after the heading line and
  before the next heading of any level (for the lead section: line 1 up to the
  first heading), and is not blank.
Headings are not recognised inside fenced code blocks (``` or ~~~) nor inside
HTML comment blocks (a line starting with <!-- up to the line holding -->),
as in CommonMark.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus3")
DEFAULT_FILES = [
    os.path.join(HERE, "queries-corpus3-dev-b.jsonl"),
    os.path.join(HERE, "queries-heldout-corpus3-b.jsonl"),
]
TYPES = {"paraphrase", "identifier", "howto", "table", "code", "navigation",
         "cjk", "page", "negative"}
LANGS = {"en", "ja"}
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def front_matter(lines):
    """Return (end_index_exclusive, title) of a leading YAML front matter."""
    if not lines or lines[0].rstrip() != "---":
        return 0, None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            title = None
            for fl in lines[1:i]:
                m = re.match(r"^title:\s*(.*?)\s*$", fl)
                if m:
                    title = m.group(1).strip("'\"")
            return i + 1, title
    return 0, None


def outline(path):
    """Sections of a file: list of (heading_text, heading_line, first, last).

    Lines are 1-based; heading_line is 0 for the lead section; first..last is
    the section's own body (may be empty when first > last)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    fm_end, title = front_matter(lines)
    stem = os.path.splitext(os.path.basename(path))[0]
    heads = []
    fence = None
    in_comment = False
    for idx in range(fm_end, len(lines)):
        line = lines[idx]
        if fence:
            s = line.strip()
            if s.startswith(fence[0] * len(fence)) and set(s) <= {fence[0]}:
                fence = None
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            continue
        if re.match(r"^ {0,3}<!--", line):
            if "-->" not in line[line.index("<!--") + 4:]:
                in_comment = True
            continue
        m = ATX.match(line)
        if m:
            text = (m.group(2) or "")
            text = re.sub(r"(^|[ \t]+)#+$", "", text).strip()
            heads.append((text, idx + 1))
    sections = []
    first_head = heads[0][1] if heads else len(lines) + 1
    sections.append((title if title else stem, 0, 1, first_head - 1))
    for i, (text, ln) in enumerate(heads):
        nxt = heads[i + 1][1] if i + 1 < len(heads) else len(lines) + 1
        sections.append((text, ln, ln + 1, nxt - 1))
    return sections, lines


def check_expect(e, where):
    errs = []
    if not isinstance(e, dict) or set(e) != {"path", "line", "heading"}:
        return [f"{where}: expect must have exactly path, line, heading: {e!r}"]
    path, line, heading = e["path"], e["line"], e["heading"]
    if not isinstance(line, int) or not isinstance(heading, str) or not isinstance(path, str):
        return [f"{where}: bad field types in {e!r}"]
    full = os.path.join(CORPUS, path)
    if not os.path.isfile(full):
        return [f"{where}: no such file {path}"]
    sections, lines = outline(full)
    named = [s for s in sections if s[0] == heading]
    if not named:
        return [f"{where}: heading {heading!r} not found in {path}"]
    if not any(s[2] <= line <= s[3] for s in named):
        spans = ", ".join(f"{s[2]}-{s[3]}" for s in named)
        return [f"{where}: line {line} not inside section {heading!r} of {path} (own lines {spans})"]
    if not lines[line - 1].strip():
        errs.append(f"{where}: line {line} of {path} is blank")
    return errs


def check_files(files):
    errs = []
    seen = {}
    count = 0
    for fn in files:
        with open(fn, encoding="utf-8") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                where = f"{os.path.basename(fn)}:{n}"
                try:
                    q = json.loads(raw)
                except json.JSONDecodeError as ex:
                    errs.append(f"{where}: bad JSON: {ex}")
                    continue
                count += 1
                if not isinstance(q, dict) or set(q) != {"id", "query", "type", "lang", "expect"}:
                    errs.append(f"{where}: keys must be id, query, type, lang, expect")
                    continue
                qid = q["id"]
                where = f"{where} ({qid})"
                if qid in seen:
                    errs.append(f"{where}: duplicate id (first at {seen[qid]})")
                seen[qid] = where
                if not isinstance(q["query"], str) or not q["query"].strip():
                    errs.append(f"{where}: empty query")
                if q["type"] not in TYPES:
                    errs.append(f"{where}: unknown type {q['type']!r}")
                if q["lang"] not in LANGS:
                    errs.append(f"{where}: unknown lang {q['lang']!r}")
                exp = q["expect"]
                if not isinstance(exp, list):
                    errs.append(f"{where}: expect must be a list")
                    continue
                if q["type"] == "negative":
                    if exp:
                        errs.append(f"{where}: negative must expect []")
                    continue
                if not 1 <= len(exp) <= 3:
                    errs.append(f"{where}: need 1-3 expects, got {len(exp)}")
                for e in exp:
                    errs.extend(check_expect(e, where))
    return count, errs


def main(argv):
    if len(argv) >= 2 and argv[0] == "--outline":
        for p in argv[1:]:
            sections, _ = outline(p)
            for text, ln, a, b in sections:
                print(f"{ln:5d} [{a}-{b}] {text}")
        return 0
    files = argv or DEFAULT_FILES
    count, errs = check_files(files)
    for e in errs:
        print(e)
    print(f"{count} queries in {len(files)} file(s), {len(errs)} error(s)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
