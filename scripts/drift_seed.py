#!/usr/bin/env python3
"""Recall of ``markdown-memory drift`` on renames seeded into the code only (docs/drift.md#measured).

For each repository (a work tree with its docs, ``TREE:DOCS_SUBDIR``), the candidates are the
names its Markdown docs give that its code defines, found without the tool's extractor:

* a long option ``--x-y`` written as code (a code span or block, HTML ``<code>``/``<pre>``) in
  docs that are not change logs or migration guides, whose option form the code spells as a
  string literal (``"--x-y"``, ``"x-y"`` in a ``.long("x-y")`` or a flag table);
* an environment variable ``APP_X`` written so that the code spells as a string literal.

``--seeds N`` of them are drawn at random (``--rng``), and each is renamed in the code, never in
the docs, on a fresh copy of the tree, in one of three ways taken in turn:

* ``full``: every spelling of the name in code and tests (``x-y``, ``x_y``, ``xY``, ``APP_X``)
  becomes the new name (``x-y-v2``);
* ``test-left``: the same, but the tests keep the old name (a test file gets one when none has it);
* ``shim``: the same, plus a compatibility line that still names the old one next to a
  deprecation notice (``# deprecated: --x-y was renamed to --x-y-v2``).

The seed is found when ``drift --json`` on the copy flags the old name and the unchanged tree
did not. Prints one line per seed and the recall; ``--json-out`` writes every seed and every name
the seeded runs flagged (for judging precision).

Usage: scripts/drift_seed.py --repo TREE:DOCS [--repo ...] [--seeds 8] [--rng 35] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_memory.drift.check import is_history
from markdown_memory.drift.codeside import is_code, is_test, list_files
from markdown_memory.drift.references import KNOWN_ENV

_DOC_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
_DOC_ENV = re.compile(r"(?<![\w$])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w])")
#: what Markdown shows as code: fenced blocks, code spans, HTML <code>/<pre>
_DOC_CODE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1|`[^`\n]+`|<(code|pre)\b[^>]*>.*?</\2>",
                       re.MULTILINE | re.DOTALL | re.IGNORECASE)
_COMMENT = {".py": "#", ".rs": "//", ".go": "//", ".js": "//", ".ts": "//", ".mjs": "//", ".cjs": "//",
            ".toml": "#", ".sh": "#", ".yaml": "#", ".yml": "#"}


def forms(name: str) -> list[str]:
    """Every spelling of ``name`` the code may use: ``--x-y``: ``x-y``, ``x_y``, ``xY``."""
    if not name.startswith("--"):
        return [name]
    bare = name[2:]
    parts = bare.split("-")
    return list(dict.fromkeys([bare, bare.replace("-", "_"), parts[0] + "".join(p.title() for p in parts[1:])]))


def renamed(form: str) -> str:
    """The new name: ``x-y-v2``, ``x_y_v2``, ``APP_X_V2``, ``xYV2``, ``follow2``."""
    if "-" in form:
        return form + "-v2"
    if "_" in form:
        return form + ("_V2" if form.isupper() else "_v2")
    return form + ("V2" if any(c.isupper() for c in form[1:]) else "2")


def _texts(tree: Path, paths: list[str]) -> dict[str, str]:
    out = {}
    for rel in paths:
        try:
            data = (tree / rel).read_bytes()
        except OSError:
            continue
        if len(data) < 2_000_000 and b"\0" not in data[:8192]:
            out[rel] = data.decode("utf-8", "replace")
    return out


def candidates(tree: Path, docs_sub: str) -> list[str]:
    """Names the docs give that the code (not tests) spells as a string literal, sorted."""
    paths = list_files(tree)
    docs = _texts(tree, [p for p in paths if p.endswith(".md") and (not docs_sub or p.startswith(docs_sub + "/"))
                         and not any(part.startswith(".") for part in p.split("/"))])  # what the index reads
    code = _texts(tree, [p for p in paths if is_code(p)])
    blob = "\n".join(code.values())
    literals = set(re.findall(r"""["'`](--?[A-Za-z][\w-]*|[A-Za-z][\w-]*)["'`]""", blob))
    named: set[str] = set()
    for rel, text in docs.items():
        if is_history(rel):
            continue  # change logs name old things on purpose
        code_text = "\n".join(m.group() for m in _DOC_CODE.finditer(text))
        named.update("--" + m for m in _DOC_FLAG.findall(code_text))
        named.update(_DOC_ENV.findall(code_text))
    out = []
    for name in sorted(named):
        if name.startswith("--"):
            if len(name) > 4 and (name in literals or name[2:] in literals and "-" in name[2:]):
                out.append(name)
        elif name in literals and name not in KNOWN_ENV:
            out.append(name)  # not a standard variable (`XDG_CONFIG_HOME`): no repository renames those
    return out


def seed(tree: Path, dest: Path, name: str, mode: str) -> int:
    """Copy ``tree`` to ``dest`` and rename ``name`` in its code as ``mode`` says; the number of
    files changed."""
    shutil.copytree(tree, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    paths = [p for p in list_files(dest) if not p.endswith((".md", ".markdown", ".rst", ".txt"))]
    # a whole word or hyphenated word (`--x-y` and `"x-y"` but not `no-x-y` or `x-y-z`)
    rx = re.compile("|".join(rf"(?<!\w)(?<!\w-){re.escape(f)}(?!\w)(?!-\w)" for f in forms(name)))
    changed, first = 0, ""
    tests_with_name = []
    for rel, text in _texts(dest, paths).items():
        if not rx.search(text):
            continue
        if is_test(rel):
            tests_with_name.append(rel)
            if mode == "test-left":
                continue
        (dest / rel).write_text(rx.sub(lambda m: renamed(m.group()), text), "utf-8")
        changed += 1
        first = first or (rel if not is_test(rel) else "")
    if mode == "test-left" and not tests_with_name:
        (dest / "tests").mkdir(exist_ok=True)
        (dest / "tests" / "test_seeded_old_name.py").write_text(f'OLD = "{name}"\n', "utf-8")
    if mode == "shim" and first:
        mark = _COMMENT.get(Path(first).suffix, "#")
        with (dest / first).open("a", encoding="utf-8") as fh:
            fh.write(f"\n{mark} deprecated: {name} was renamed to {renamed(name)}; the old name still works\n")
    return changed


def run_drift(tree: Path, docs_sub: str, db: Path) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "drift", "--json",
                           "--docs-dir", str(tree / docs_sub if docs_sub else tree), "--code-root", str(tree)],
                          capture_output=True, text=True, env=dict(os.environ, MARKDOWN_MEMORY_DB=str(db)), check=False)
    if proc.returncode != 0:
        raise SystemExit(f"drift failed on {tree}: {proc.stderr.strip()}")
    return [dict(m, file=s["file_path"]) for s in json.loads(proc.stdout)["sections"] for m in s["missing"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", action="append", required=True, metavar="TREE:DOCS_SUBDIR")
    ap.add_argument("--seeds", type=int, default=8, help="renames per repository (default 8)")
    ap.add_argument("--rng", type=int, default=35, help="random seed of the draw (default 35)")
    ap.add_argument("--json-out", metavar="PATH")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []
    modes = ("full", "test-left", "shim")
    for spec in args.repo:
        tree_s, _, docs_sub = spec.partition(":")
        tree, docs_sub = Path(tree_s), docs_sub.strip("/").removeprefix(".")
        pool = candidates(tree, docs_sub)
        picked = random.Random(f"{args.rng}:{tree.name}").sample(pool, min(args.seeds, len(pool)))
        with tempfile.TemporaryDirectory(prefix="drift-seed-") as tmp:
            base = {(m["file"], m["name"], m["line"]) for m in run_drift(tree, docs_sub, Path(tmp) / "base.db")}
            for i, name in enumerate(picked):
                mode = modes[i % len(modes)]
                dest = Path(tmp) / f"seed{i}"
                files = seed(tree, dest, name, mode)
                flagged = [m for m in run_drift(dest, docs_sub, Path(tmp) / f"seed{i}.db")
                           if (m["file"], m["name"], m["line"]) not in base]
                found = any(m["name"] == name for m in flagged)
                rows.append({"repo": tree.name, "name": name, "mode": mode, "files_changed": files, "found": found,
                             "candidates": len(pool), "flagged": flagged})
                print(f"{tree.name:14s} {mode:9s} {name:32s} files {files:3d}  {'FOUND' if found else 'missed'}"
                      f"  new flags {len(flagged)}", flush=True)
                if args.json_out:  # after every seed: a long run stopped early keeps what it measured
                    Path(args.json_out).write_text(json.dumps(rows, indent=1))
                shutil.rmtree(dest)
    found = sum(1 for r in rows if r["found"])
    print(f"recall {found}/{len(rows)} = {found / len(rows):.0%}" if rows else "no seeds")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
