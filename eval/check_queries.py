#!/usr/bin/env python3
"""Check evaluation question files (JSON Lines) against a documentation corpus.

Usage: python3 eval/check_queries.py [--root eval/corpus3] FILE.jsonl [FILE.jsonl ...]

For every question:
  * the object has id, query, type, lang, expect; ids are unique across all files;
  * type is one of the known types; a `negative` has expect == [] and every
    other type has 1-3 expects, except `real` (a question a user really asked,
    with its `source` URL), which has 1-3 expects or, when the docs do not
    answer it, expect == [];
  * each expect's path exists under the root;
  * its heading exists in that file: an ATX heading line (outside fenced code
    blocks) whose text equals `heading`; or, for the text before the file's
    first heading, the front-matter `title` (else the file stem);
  * its line lies inside that heading's own section: after the heading line and
    before the next heading of any level (fenced code blocks contain no headings).
Exit status is 1 if any error was found.  Standard library only.
"""
import argparse
import json
import os
import re
import sys

TYPES = {"paraphrase", "identifier", "howto", "table", "code", "navigation", "page", "negative", "cjk",
         "real"}
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def front_matter(lines):
    """Return (title or None, index of the first line after the front matter)."""
    if not lines or lines[0].rstrip() != "---":
        return None, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            title = None
            for fm in lines[1:i]:
                m = re.match(r"^title:\s*(.*?)\s*$", fm)
                if m:
                    title = m.group(1).strip("'\"")
            return title, i + 1
    return None, 0


def sections(path):
    """List of (heading text, first line no, last line no) - 1-based, body lines only.

    The first entry is the lead section (text before the first heading), named by
    the front-matter title or the file stem.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    title, start = front_matter(lines)
    heads = []  # (line no, text)
    fence = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and line.strip() == m.group(1):
                fence = None
            continue
        m = ATX.match(line)
        if m:
            text = m.group(2) or ""
            text = re.sub(r"[ \t]+#+$", "", text).strip()
            if text == "#" * len(text):
                text = ""
            heads.append((i + 1, text))
    out = []
    lead_name = title if title else os.path.splitext(os.path.basename(path))[0]
    first = heads[0][0] if heads else len(lines) + 1
    out.append((lead_name, start + 1, first - 1))
    for k, (ln, text) in enumerate(heads):
        end = heads[k + 1][0] - 1 if k + 1 < len(heads) else len(lines)
        out.append((text, ln + 1, end))
    return out


def check(files, root):
    errors = []
    seen = {}
    counts = {}
    cache = {}
    for fn in files:
        with open(fn, encoding="utf-8") as f:
            for n, raw in enumerate(f, 1):
                where = f"{fn}:{n}"
                if not raw.strip():
                    continue
                try:
                    q = json.loads(raw)
                except ValueError as e:
                    errors.append(f"{where}: bad JSON: {e}")
                    continue
                qid = q.get("id", "?")
                where = f"{where} [{qid}]"
                for key in ("id", "query", "type", "lang", "expect"):
                    if key not in q:
                        errors.append(f"{where}: missing key {key!r}")
                if qid in seen:
                    errors.append(f"{where}: duplicate id (first at {seen[qid]})")
                seen[qid] = where
                typ = q.get("type")
                counts[typ] = counts.get(typ, 0) + 1
                if typ not in TYPES:
                    errors.append(f"{where}: unknown type {typ!r}")
                exp = q.get("expect", [])
                if typ == "negative":
                    if exp != []:
                        errors.append(f"{where}: negative question must have expect []")
                    continue
                if typ == "real":
                    if not str(q.get("source", "")).startswith("http"):
                        errors.append(f"{where}: a real question needs its source URL")
                    if exp == []:
                        continue
                if not 1 <= len(exp) <= 3:
                    errors.append(f"{where}: expected 1-3 expects, got {len(exp)}")
                for e in exp:
                    path, line, heading = e.get("path"), e.get("line"), e.get("heading")
                    full = os.path.join(root, path or "")
                    if not path or not os.path.isfile(full):
                        errors.append(f"{where}: no such file {path!r}")
                        continue
                    if full not in cache:
                        cache[full] = sections(full)
                    secs = [s for s in cache[full] if s[0] == heading]
                    if not secs:
                        errors.append(f"{where}: heading {heading!r} not in {path}")
                        continue
                    if not isinstance(line, int) or not any(a <= line <= b for _, a, b in secs):
                        spans = ", ".join(f"{a}-{b}" for _, a, b in secs)
                        errors.append(f"{where}: line {line} not inside section {heading!r} "
                                      f"of {path} (body lines {spans})")
    return errors, counts, len(seen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "corpus3"))
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    errors, counts, n = check(a.files, a.root)
    for e in errors:
        print("ERROR", e)
    print(f"{n} questions; types: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items(), key=str)))
    print(f"{len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
