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

from .. import messages
from ..errors import UsageError
from .owners import OWNERS_KEY, read_owners

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
_LONG_OPTION = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w])")

#: names the code builds at run time (docs/drift.md#names-the-code-builds), stored as marker
#: tokens no identifier can equal: ``=prefix:APP_`` for ``f"APP_{name}"``, ``"APP_" + name``
#: (not a bare ``"APP_"``: ``HasPrefix(key, "APP_")`` tests names, it builds none),
#: ``format!("APP_{}")``, ``fmt.Sprintf("APP_%s")``, ``env_prefix="APP_"``; ``=suffix:_HOME``
#: for ``f"{tool}_HOME"``; ``=negation`` where the code generates ``--no-x`` for every option
#: (``"--no-" + name``, ``f"--no-{name}"``); ``=negatable:x`` for an option argparse's
#: ``BooleanOptionalAction`` gives a ``--no-x``.
PREFIX_MARK, SUFFIX_MARK, NEGATION_MARK = "=prefix:", "=suffix:", "=negation"
_BUILT_PREFIX = re.compile(r"""(?<=["'`])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_)(?=\{|%[sv]|\$\{|["'`]\s*\+)""")
_BUILT_SUFFIX = re.compile(r"""(?:\}|%[sv])(_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)(?=["'`])""")
_PREFIX_SETTING = re.compile(r"""(?i:env_?(?:var)?_?prefix|auto_?envvar_?prefix)["']?\s*[=:(,]\s*["']([A-Za-z][A-Za-z0-9_]*)["']""")
#: where code names an option by one word: a string literal (``"json"``, ``"--json"``), an
#: attribute of the parsed arguments (``args.json``), a field under a clap ``#[arg(long)]``
LITERAL_MARK = "=lit:"
_LITERAL = re.compile(r"""["'`]-{0,2}([A-Za-z][\w-]{0,40})["'`]""")
_ARGS_ATTR = re.compile(r"\b(?:args|argv|opts|options|flags|parsed_args|cli|matches|opt)\.([A-Za-z_]\w*)")
_CLAP_FIELD = re.compile(r"#\[(?:arg|clap|structopt)\([^\]]*\blong\b[^\]]*\]\s*(?:///[^\n]*\n\s*|#\[[^\]]*\]\s*)*"
                         r"(?:pub(?:\([\w ]+\))?\s+)?([a-z_]\w*)\s*:")
_NEGATION = re.compile(r"""["'`](?:--)?no-(?:["'`]\s*\+|\{|%s|\$\{)""")
#: argparse's BooleanOptionalAction makes `--no-x` for the options of its own call only
NEGATABLE_MARK = "=negatable:"
_BOOLEAN_OPTIONAL = re.compile(r"add_argument\(((?:[^()]|\([^()]*\))*?BooleanOptionalAction(?:[^()]|\([^()]*\))*)\)")
#: a prefix held in a named constant and joined to a rest at run time (``const envPrefix =
#: "APP_"`` ... ``os.Getenv(envPrefix + key)``; ``ENV_PREFIX = "APP_"`` ... ``f"{ENV_PREFIX}{name}"``).
#: Definition and use are often in different files, so each is stored (``=prefixconst:NAME=APP_``,
#: ``=prefixuse:NAME``) and the check joins them (``joined_prefixes``); within one file the
#: family marker is stored at once.
PREFIX_CONST_MARK, PREFIX_USE_MARK = "=prefixconst:", "=prefixuse:"
_PREFIX_CONST = re.compile(r"""\b([A-Za-z_]\w*)\s*(?::\s*&(?:'static\s+)?str\s*|\s+string\s*)?:?=\s*"""
                           r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_)["']""")
#: ``NAME + rest``, ``{NAME}{rest}`` (f-string, ``format!``), ``${NAME}${rest}``, ``Sprintf("%s%s", NAME, ...)``
_JOINED = re.compile(r"""\b([A-Za-z_]\w*)\s*\+(?![+=])|\{([A-Za-z_]\w*)\}\$?\{|"""
                     r"""(?:Sprintf|format!)\(\s*"(?:%s|%v|\{\})(?:%s|%v|\{\})"\s*,\s*([A-Za-z_]\w*)""")
#: a name that reads as a constant or a prefix: its use is kept for a join with another file's definition
_CONST_LIKE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|(?i:prefix)")
#: argument parsers that make ``--no-x`` for every option ``x`` by default (yargs-parser's
#: boolean negation, minimist, mri; typer's ``--x/--no-x`` for every bool) and options a
#: parser adds to every program (plumbum's ``--help-all``), from the import in a file
_NEGATING_PARSER = re.compile(r"""(?:require\(\s*|\bfrom\s+|\bimport\s+)["'](?:yargs(?:-parser)?|minimist|mri)(?:/[\w/]*)?["']|"""
                              r"""^\s*(?:import|from)\s+typer\b""", re.MULTILINE)
_GENERATED_OPTIONS = ((re.compile(r"^\s*(?:from\s+plumbum\s+import\s+[^\n]*\bcli\b|import\s+plumbum\.cli)", re.MULTILINE),
                       ("--help-all",)),)


@dataclass(frozen=True)
class CodeUpdate:
    """One refresh of the code index: ``files`` listed, ``read`` (stat changed), ``tokenized``
    (content changed), ``removed``."""

    root: str
    files: int
    read: int
    tokenized: int
    removed: int


def find_code_root(docs_root: Path, code_root: str | None, *, agent: bool = False) -> Path:
    """The code root: ``code_root`` when given (must be a folder), else the git work tree that
    holds ``docs_root``. Raises UsageError when neither is known, worded for an agent calling
    the MCP tool (``agent``, which has no code-root argument) or a person at the CLI."""
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
        raise UsageError(messages.no_code_root(docs_root, agent=agent))
    return Path(out.stdout.strip()).resolve()


def is_ignored(root: Path, path: str) -> bool:
    """True when git's ignore rules of the work tree ``root`` match ``path`` (a build or run
    output such as ``book/`` or ``test/_results``); False outside git or on any error."""
    try:
        out = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--no-index", "--", path],
                             capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0


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


#: tests exercise names, they do not define them: a name left only in a test is gone
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|__tests__|spec|testdata|test_?data|e2e|integration_tests?)/|"
                        r"(?:^|/)test_[^/]*\.py$|_test\.(?:py|go|rs)$|\.(?:test|spec)\.[cm]?[jt]sx?$")


def is_test(path: str) -> bool:
    """True for a test file or a file under a test folder (``tests/``, ``x_test.go``, ``a.test.js``)."""
    return bool(_TEST_PATH.search(path))


def is_code(path: str) -> bool:
    """True for a file whose tokens count as names the code holds (not documentation, not tests)."""
    if is_test(path):
        return False
    name = path.rsplit("/", 1)[-1].lower()
    stem, dot, suffix = name.rpartition(".")
    if dot and "." + suffix in DOC_SUFFIXES:
        return False
    return (stem if dot else name) not in DOC_NAMES


#: a line saying a name is on its way out; the names within one line of it are a shim's
_DEPRECATION = re.compile(r"deprecat|obsolete|no longer (?:supported|used)|renamed to|was renamed|legacy alias",
                          re.IGNORECASE)
DEPRECATED_MARK = "=deprecated:"


def _words(text: str) -> set[str]:
    found: set[str] = set(_LONG_OPTION.findall(text))
    for match in _TOKEN.finditer(text):
        word = match.group()
        found.add(word)
        if "-" in word or "." in word:
            found.update(p for p in re.split(r"[-.]", word) if p)
    return found


def tokens_of(data: bytes) -> set[str]:
    """The distinct names a source file holds: identifiers, hyphenated words (``dry-run``), dotted
    words (``config.toml``, ``server.port``) and, for each of the last two, its parts; long
    options spelled out (``--max-size``); family markers (``=prefix:APP_``, see above). A name
    held only within one line of a deprecation notice (a shim kept for old users) is stored as
    ``=deprecated:NAME`` instead: it does not vouch for docs that still teach it."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    near = {j for i, line in enumerate(lines) if _DEPRECATION.search(line) for j in (i - 1, i, i + 1)}
    if near:
        live = _words("\n".join(line for i, line in enumerate(lines) if i not in near))
        shim = _words("\n".join(line for i, line in enumerate(lines) if i in near)) - live
    else:
        live, shim = _words(text), set()
    found = live | {DEPRECATED_MARK + w for w in shim} | _families(text)
    for call in _BOOLEAN_OPTIONAL.findall(text):
        found.update(NEGATABLE_MARK + o[2:] for o in _LONG_OPTION.findall(call))
    words = {w for w in _LITERAL.findall(text) if w in live} | set(_ARGS_ATTR.findall(text)) | \
        {w.replace("_", "-") for w in _CLAP_FIELD.findall(text)}
    found.update(LITERAL_MARK + w for w in words)
    return found


def _families(text: str) -> set[str]:
    """Marker tokens of the names ``text`` builds or its parser generates (see the marks above)."""
    found = {PREFIX_MARK + p for p in _BUILT_PREFIX.findall(text)}
    found.update(PREFIX_MARK + p.upper().rstrip("_") + "_" for p in _PREFIX_SETTING.findall(text))
    found.update(SUFFIX_MARK + p for p in _BUILT_SUFFIX.findall(text))
    consts = dict(_PREFIX_CONST.findall(text))
    for match in _JOINED.finditer(text):
        name = next(g for g in match.groups() if g)
        if name in consts:
            found.add(PREFIX_MARK + consts[name])
        elif _CONST_LIKE.search(name):
            found.add(PREFIX_USE_MARK + name)
    found.update(f"{PREFIX_CONST_MARK}{name}={prefix}" for name, prefix in consts.items())
    if _NEGATION.search(text) or _NEGATING_PARSER.search(text):
        found.add(NEGATION_MARK)
    for imported, options in _GENERATED_OPTIONS:
        if imported.search(text):
            found.update(options)
    return found


#: dependency manifests: the names they hold (minus the project's own) are third-party
_MANIFEST = re.compile(r"(?:^|/)(?:pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|Cargo\.toml|"
                       r"package\.json|go\.mod|Pipfile)$")
_PROJECT_NAME = re.compile(r"""\bname\s*[=:]\s*["']([^"']+)["']""")
DEPENDENCIES_KEY = "drift_dependencies"
#: the tokenizer's rules: a stored code index read by other rules is read again
TOKENS_VERSION_KEY, TOKENS_VERSION = "drift_tokens_version", "7"


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
        if store.get_meta("code_root") != real or store.get_meta(TOKENS_VERSION_KEY) != TOKENS_VERSION:
            store.code.clear()  # another root, or tokens read by older rules (no family markers)
            store.set_meta("code_root", real)
            store.set_meta(TOKENS_VERSION_KEY, TOKENS_VERSION)
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
        store.set_meta(OWNERS_KEY, read_owners(code_root, sorted(present)).to_json())
    return CodeUpdate(real, len(present), read, tokenized, len(gone))
