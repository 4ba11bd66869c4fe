#!/usr/bin/env python3
"""Precision and recall of ``markdown-memory drift`` on real history (docs/drift.md#measured).

For each repository (a bare or normal git directory) and each of ``--points`` commits spread
over its last ``--span`` first-parent commits (each the parent of a commit that changed the
docs), the tree at commit C is exported to a temporary
folder and ``markdown-memory drift --json --code-root TREE`` runs on its docs root (the
prediction). Every reference the extractor finds there (``drift.references``) is labelled from
git alone, independently of the code index:

* drifted at C when the code (files that are not documentation) at C no longer holds the name
  (``git grep -w -F``; a path: not in ``git ls-tree``) but did at some earlier commit
  (``git log -S`` / ``git log -- PATH`` up to C), and the docs at the newest commit no longer
  give it as a reference of that kind (a later commit dropped or renamed it; a name that is
  still mentioned but no longer as, say, an import from this package counts as dropped);
* fine otherwise.

A second label, *wrong*, drops the "did at some earlier commit" condition: the docs named
something the code did not hold and a later commit dropped it (a doc error fixed later, such as
an option documented under a name it never had); ``precision(wrong)`` counts those flags as right.

Precision = flagged and drifted / flagged; recall = flagged and drifted / drifted. Prints one
line per commit and a total per repository; ``--json-out`` writes every labelled reference.

Usage: scripts/drift_history.py --repo GITDIR:DOCS_SUBDIR [--repo ...] [--points 4] [--span 600]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from markdown_memory.drift.check import is_history
from markdown_memory.drift.codeside import list_files
from markdown_memory.drift.owners import OWNERS_KEY, Owners, read_owners
from markdown_memory.drift.references import Reference, section_references
from markdown_memory.store import Store

NOT_DOCS = [":(exclude)*.md", ":(exclude)*.rst", ":(exclude)*.txt", ":(exclude)*.markdown", ":(exclude)*.html",
            ":(exclude)CHANGELOG*", ":(exclude)*/CHANGELOG*"]


def git(gitdir: str, *args: str, data: bool = False) -> str | bytes:
    out = subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=False)
    return out.stdout if data else out.stdout.decode("utf-8", "replace")


def pick_commits(gitdir: str, docs_sub: str, points: int, span: int) -> list[str]:
    """``points`` commits spread over the last ``span`` first-parent commits (oldest first): each
    the parent of a commit that changed the docs (the moment a fix could be due), none in the
    newest tenth (a later commit must have had the chance to fix the docs)."""
    commits = str(git(gitdir, "rev-list", "--first-parent", f"--max-count={span}", "HEAD")).split()
    commits.reverse()
    usable = commits[: max(1, int(len(commits) * 0.9))]
    touched = set(str(git(gitdir, "rev-list", "--first-parent", f"--max-count={span}", "HEAD", "--",
                          *(f"{docs_sub}/*.md" if docs_sub else "*.md",))).split())
    before = [usable[i - 1] for i in range(1, len(usable)) if usable[i] in touched]
    pool = before or usable
    step = max(1, len(pool) // points)
    return list(dict.fromkeys(pool[min(len(pool) - 1, i * step + step // 2)] for i in range(points)))


def removed_references(gitdir: str, commit: str, docs_sub: str, owners: Owners) -> list[Reference]:
    """References on the Markdown lines ``commit`` removed from the docs (``owners``: the
    repository's commands, for the ownership rules)."""
    diff = str(git(gitdir, "show", "--format=", "-U0", commit, "--", f"{docs_sub}/*.md" if docs_sub else "*.md"))
    removed = "\n".join(line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    return section_references(removed, 1, owners)


def pick_fix_commits(gitdir: str, docs_sub: str, points: int, span: int, owners: Owners) -> list[str]:
    """``points`` commits spread over the parents of the docs changes (last ``span`` first-parent
    commits) that removed a reference the code at the parent no longer held: the moments where the
    docs were known to drift. The labels still come from the rules above, per reference."""
    commits = str(git(gitdir, "rev-list", "--first-parent", f"--max-count={span}", "HEAD", "--",
                      f"{docs_sub}/*.md" if docs_sub else "*.md")).split()
    found = []
    for d in reversed(commits):
        parent = str(git(gitdir, "rev-parse", "--verify", "-q", f"{d}^1")).strip()
        refs = [r for r in removed_references(gitdir, d, docs_sub, owners) if r.kind != "path"]
        if not parent or not refs:
            continue
        names = {n for r in refs for n in ground_name(r)}
        if any(not any(f in present_in_code(gitdir, parent, names) for f in ground_name(r)) for r in refs):
            found.append(parent)
    step = max(1, len(found) // points) if found else 1
    return list(dict.fromkeys(found[min(len(found) - 1, i * step + step // 2)] for i in range(points))) if found else []


def export(gitdir: str, commit: str, dest: Path) -> None:
    tar = git(gitdir, "archive", commit, data=True)
    assert isinstance(tar, bytes)
    with tarfile.open(fileobj=BytesIO(tar)) as archive:
        archive.extractall(dest, filter="data")


def ground_name(ref: Reference) -> list[str]:
    """The strings whose presence in the code means the code still holds ``ref``."""
    bare = ref.name.removesuffix("()")
    if ref.kind == "flag":
        b = bare.lstrip("-")
        return [b, b.replace("-", "_")]
    if ref.kind == "name":
        return [bare.split(".")[-1]]
    return [bare]


def present_in_code(gitdir: str, commit: str, names: set[str]) -> set[str]:
    """The subset of ``names`` found as whole words in the non-documentation files at ``commit``."""
    found: set[str] = set()
    names_list = sorted(names)
    for i in range(0, len(names_list), 200):
        args = ["grep", "-o", "-h", "-w", "-F", "-I"]
        for n in names_list[i:i + 200]:
            args += ["-e", n]
        out = str(git(gitdir, *args, commit, "--", ".", *NOT_DOCS))
        found.update(line.split(":", 1)[-1].strip() for line in out.splitlines())
    return found & names


def existed_before(gitdir: str, commit: str, ref: Reference, forms: list[str]) -> bool:
    if ref.kind == "path":
        return bool(str(git(gitdir, "log", "-1", "--format=%H", commit, "--", ref.name)).strip())
    return any(str(git(gitdir, "log", "-1", "--format=%H", f"-S{f}", commit, "--", ".", *NOT_DOCS)).strip()
               for f in forms)


def dropped_later(head_refs: dict[str, set[tuple[str, str, str]]], file_path: str, ref: Reference) -> bool:
    """True when the newest docs no longer give ``ref`` as a reference of the same kind (in its
    file, or anywhere when the file is gone): a later commit dropped or renamed it."""
    key = (ref.kind, ref.name, ref.module)
    refs = head_refs.get(file_path)
    if refs is not None:
        return key not in refs
    return not any(key in r for r in head_refs.values())


def head_references(docs_head: dict[str, str], owners: Owners) -> dict[str, set[tuple[str, str, str]]]:
    return {f: {(r.kind, r.name, r.module) for r in section_references(t, 1, owners)} for f, t in docs_head.items()}


def owners_at(gitdir: str, commit: str) -> Owners:
    """The repository's own commands at ``commit`` (its manifests, read from an exported tree)."""
    with tempfile.TemporaryDirectory(prefix="drift-owners-") as tmp:
        export(gitdir, commit, Path(tmp))
        return read_owners(Path(tmp), list_files(Path(tmp)))


def docs_at_head(gitdir: str, docs_sub: str) -> dict[str, str]:
    files = str(git(gitdir, "ls-tree", "-r", "--name-only", "HEAD", "--", docs_sub or ".")).split("\n")
    out = {}
    for f in files:
        if f.endswith(".md"):
            rel = f[len(docs_sub) + 1:] if docs_sub else f
            out[rel] = str(git(gitdir, "show", f"HEAD:{f}"))
    return out


def measure_commit(gitdir: str, docs_sub: str, commit: str,
                   head_refs: dict[str, set[tuple[str, str, str]]]) -> list[dict[str, object]]:
    """Every reference at ``commit`` with its label and the tool's prediction."""
    with tempfile.TemporaryDirectory(prefix="drift-hist-") as tmp:
        tree = Path(tmp) / "tree"
        export(gitdir, commit, tree)
        docs = tree / docs_sub if docs_sub else tree
        db = Path(tmp) / "index.db"
        proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "drift", "--json",
                               "--docs-dir", str(docs), "--code-root", str(tree)], capture_output=True, text=True,
                              env=dict(os.environ, MARKDOWN_MEMORY_DB=str(db)), check=False)
        if proc.returncode != 0:
            raise SystemExit(f"drift failed at {commit}: {proc.stderr.strip()}")
        flagged = {(s["file_path"], m["name"], m["line"]) for s in json.loads(proc.stdout)["sections"]
                   for m in s["missing"]}
        store = Store(db)
        try:
            sections = store.code.all_sections()
            owners = Owners.from_json(store.get_meta(OWNERS_KEY))
        finally:
            store.close()
    refs = [(s.file_path, r) for s in sections if not is_history(s.file_path)
            for r in section_references(s.text, s.start_line, owners, f"{s.file_path} {s.heading_path}")]
    tree_files = set(str(git(gitdir, "ls-tree", "-r", "--name-only", commit)).split("\n"))
    names = {n for _f, r in refs if r.kind != "path" for n in ground_name(r)}
    present = present_in_code(gitdir, commit, names)
    rows = []
    lost_cache: dict[tuple[str, str], bool] = {}
    for file_path, ref in refs:
        forms = ground_name(ref)
        if ref.kind == "path":
            absent = not any(p == ref.name or p.startswith(ref.name + "/") or p.endswith("/" + ref.name)
                             for p in tree_files if p)
        else:
            absent = not any(f in present for f in forms)
        drifted = wrong = False
        if absent and dropped_later(head_refs, file_path, ref):
            wrong = True
            key = (ref.kind, ref.name)
            if key not in lost_cache:
                lost_cache[key] = existed_before(gitdir, commit, ref, forms)
            drifted = lost_cache[key]
        rows.append({"commit": commit, "file": file_path, "line": ref.line, "name": ref.name, "kind": ref.kind,
                     "drifted": drifted, "wrong": wrong, "flagged": (file_path, ref.name, ref.line) in flagged})
    return rows


def summary(rows: list[dict[str, object]]) -> str:
    """Counts, precision and recall against ``drifted``, and precision against ``wrong`` (the
    docs named something the code did not hold and a later commit dropped it, whether or not the
    code ever had it: a doc error fixed later)."""
    tp = sum(1 for r in rows if r["flagged"] and r["drifted"])
    fp = sum(1 for r in rows if r["flagged"] and not r["drifted"])
    fn = sum(1 for r in rows if r["drifted"] and not r["flagged"])
    tpw = sum(1 for r in rows if r["flagged"] and r["wrong"])
    prec = f"{tp / (tp + fp):.0%}" if tp + fp else "n/a"
    rec = f"{tp / (tp + fn):.0%}" if tp + fn else "n/a"
    precw = f"{tpw / (tp + fp):.0%}" if tp + fp else "n/a"
    return f"refs {len(rows):5d}  drifted {tp + fn:3d}  flagged {tp + fp:3d}  TP {tp:3d}  FP {fp:3d}  FN {fn:3d}  " \
           f"precision {prec:>4}  recall {rec:>4}  precision(wrong) {precw:>4}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", action="append", required=True, metavar="GITDIR:DOCS_SUBDIR",
                    help="a git directory and the docs root inside its tree ('' or '.' for the top)")
    ap.add_argument("--points", type=int, default=4, help="commits per repository (default 4)")
    ap.add_argument("--span", type=int, default=600, help="spread over this many newest first-parent commits")
    ap.add_argument("--select", choices=("docs", "fixes"), default="docs",
                    help="docs: commits before docs changes; fixes: before docs changes that removed a name the "
                    "code no longer held (default docs)")
    ap.add_argument("--json-out", metavar="PATH", help="write every labelled reference here")
    args = ap.parse_args()
    everything: list[dict[str, object]] = []
    for spec in args.repo:
        gitdir, _, docs_sub = spec.partition(":")
        docs_sub = docs_sub.strip("/").removeprefix(".")
        owners = owners_at(gitdir, "HEAD")
        head_refs = head_references(docs_at_head(gitdir, docs_sub), owners)
        repo_rows: list[dict[str, object]] = []
        picked = pick_fix_commits(gitdir, docs_sub, args.points, args.span, owners) if args.select == "fixes" \
            else pick_commits(gitdir, docs_sub, args.points, args.span)
        for commit in picked:
            try:
                rows = measure_commit(gitdir, docs_sub, commit, head_refs)
            except tarfile.ReadError as exc:  # a snapshot without its largest blobs cannot export this commit
                print(f"{Path(gitdir).parent.name:22s} {commit[:10]} skipped: {exc}", flush=True)
                continue
            date = str(git(gitdir, "log", "-1", "--format=%cs", commit)).strip()
            print(f"{Path(gitdir).parent.name:22s} {commit[:10]} {date}  {summary(rows)}", flush=True)
            for r in rows:
                r["repo"] = Path(gitdir).parent.name
            repo_rows += rows
        print(f"{Path(gitdir).parent.name:22s} {'all':21s}  {summary(repo_rows)}", flush=True)
        everything += repo_rows
    print(f"{'total':44s}  {summary(everything)}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
