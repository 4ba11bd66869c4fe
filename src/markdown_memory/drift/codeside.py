"""The code side of a docs root: which files it has and which names they hold.

The code root is the git work tree the docs root lives in (``git rev-parse --show-toplevel``),
or the folder given as ``--code-root``. Its files are git's list (``git ls-files``: tracked
files and untracked ones git does not ignore), or, outside git, every file below the root
except hidden folders. Every file is recorded (a path reference is checked against the list);
source and configuration files are also tokenized (``code_tokens``), documentation files
(Markdown, reStructuredText, text, change logs) are not: docs must not vouch for themselves.

Updates are incremental like the docs index: a file whose size and mtime are unchanged is not
read; a changed one is read and hashed, and re-tokenized only when its sha256 changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Store

log = logging.getLogger("markdown_memory.drift")

#: files larger than this are listed but not tokenized (generated data, vendored bundles)
MAX_CODE_BYTES = 2_000_000
#: documentation, not code: listed for path checks, never tokenized
DOC_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".html",
                          ".htm", ".ipynb", ".po", ".pot", ".svg", ".css"})
DOC_NAMES = frozenset({"changelog", "changes", "history", "news", "authors", "contributors", "license"})

# identifiers, hyphenated words (flag names in string literals) and file names in literals
_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*")
_LONG_OPTION = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


@dataclass(frozen=True)
class CodeUpdate:
    """One refresh of the code index: ``files`` listed, ``read`` (stat changed), ``tokenized``
    (content changed), ``removed``."""

    root: str
    files: int
    read: int
    tokenized: int
    removed: int


def find_code_root(docs_root: Path, code_root: str | None) -> Path:
    """The code root: ``code_root`` when given (must be a folder), else the git work tree that
    holds ``docs_root``. Raises UsageError when neither is known."""
    if code_root:
        path = Path(code_root).expanduser().resolve()
        if not path.is_dir():
            raise UsageError(f"--code-root {code_root!r} is not a folder; pass the repository the docs describe")
        return path
    try:
        out = subprocess.run(["git", "-C", str(docs_root), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        out = None
    if out is None or out.returncode != 0 or not out.stdout.strip():
        raise UsageError(f"the docs root {str(docs_root)!r} is not inside a git repository, so its code side is "
                         "unknown; pass --code-root DIR")
    return Path(out.stdout.strip()).resolve()


def list_files(root: Path) -> list[str]:
    """Relative POSIX paths of the code root's files (git's list in a git work tree)."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        out = None
    if out is not None and out.returncode == 0:
        return sorted({p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p})
    paths: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        rel = Path(folder).relative_to(root).as_posix()
        paths.extend(name if rel == "." else f"{rel}/{name}" for name in files)
    return sorted(paths)


def _storable(rel: str) -> bool:
    """True for a path SQLite can store as text and a doc can name (UTF-8, printable)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return rel.isprintable()


def is_code(path: str) -> bool:
    """True for a file whose tokens count as names the code holds (not documentation)."""
    name = path.rsplit("/", 1)[-1].lower()
    stem, dot, suffix = name.rpartition(".")
    if dot and "." + suffix in DOC_SUFFIXES:
        return False
    return (stem if dot else name) not in DOC_NAMES


def tokens_of(data: bytes) -> set[str]:
    """The distinct names a source file holds: identifiers, hyphenated words (``dry-run``), dotted
    words (``config.toml``, ``server.port``) and, for each of the last two, its parts; and long
    options spelled out (``--max-size``)."""
    text = data.decode("utf-8", "replace")
    found: set[str] = set(_LONG_OPTION.findall(text))
    for match in _TOKEN.finditer(text):
        word = match.group()
        found.add(word)
        if "-" in word or "." in word:
            found.update(p for p in re.split(r"[-.]", word) if p)
            if "." in word:
                found.update(p for p in word.split(".") if p)
    return found


#: dependency manifests: the names they hold (minus the project's own) are third-party
_MANIFEST = re.compile(r"(?:^|/)(?:pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|Cargo\.toml|"
                       r"package\.json|go\.mod|Pipfile)$")
_PROJECT_NAME = re.compile(r"""\bname\s*[=:]\s*["']([^"']+)["']""")
DEPENDENCIES_KEY = "drift_dependencies"


def dependency_names(code_root: Path, paths: list[str]) -> set[str]:
    """Lower-case words of the dependency manifests among ``paths`` (``watchfiles``, ``serde``),
    without the names the manifests give the project itself."""
    words: set[str] = set()
    own: set[str] = set()
    for rel in paths:
        if not _MANIFEST.search(rel):
            continue
        try:
            text = (code_root / rel).read_text("utf-8", "replace")
        except OSError:
            continue
        words.update(w.lower() for w in re.findall(r"[A-Za-z][\w-]*", text))
        own.update(n.lower() for n in _PROJECT_NAME.findall(text))
    return {w.replace("-", "_") for w in words - own}


def update_code_index(store: Store, code_root: Path) -> CodeUpdate:
    """Bring ``store``'s code tables up to date with ``code_root`` (see the module doc). A file
    that cannot be read is skipped with a warning; it never stops the run."""
    real = str(code_root.resolve())
    with store.transaction():
        store.code.ensure_tables()
        if store.get_meta("code_root") != real:
            store.code.clear()
            store.set_meta("code_root", real)
    stored = store.code.files()
    listed = list_files(code_root)
    read = tokenized = 0
    present: set[str] = set()
    with store.transaction():
        for rel in listed:
            if not _storable(rel):
                continue  # a name that is not UTF-8 (or holds control characters) names no doc reference
            path = code_root / rel
            try:
                st = path.stat()
            except OSError:
                continue  # listed by git but deleted from the work tree
            if not path.is_file():
                continue
            present.add(rel)
            old = stored.get(rel)
            if old is not None and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
                continue
            read += 1
            try:
                data = path.read_bytes() if st.st_size <= MAX_CODE_BYTES else b""
            except OSError as exc:
                log.warning("drift: cannot read %s: %s", rel, exc)
                continue
            digest = hashlib.sha256(data).hexdigest()
            if old is not None and old.sha256 == digest:
                store.code.touch_file(old.id, st.st_size, st.st_mtime_ns)
                continue
            code = is_code(rel) and data and b"\0" not in data[:8192]
            store.code.put_file(rel, st.st_size, st.st_mtime_ns, digest, tokens_of(data) if code else None)
            tokenized += 1 if code else 0
        gone = [f.id for p, f in stored.items() if p not in present]
        store.code.delete_files(gone)
        store.set_meta(DEPENDENCIES_KEY, json.dumps(sorted(dependency_names(code_root, sorted(present)))))
    return CodeUpdate(real, len(present), read, tokenized, len(gone))
