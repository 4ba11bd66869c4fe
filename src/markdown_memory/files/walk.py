"""Find the Markdown files of a docs root, safely.

* Extensions (any case, only the final one counts, so ``notes.md.bak`` and ``draft.md~`` are
  not Markdown): ``.md``, ``.markdown``, ``.mdx`` and the other extensions GitHub (Linguist)
  reads as Markdown, ``.mkd``, ``.mkdn``, ``.mdown``, ``.mkdown``, ``.mdwn`` (Vim, TextMate,
  ikiwiki...). Files of Markdown dialects that are not parsed as Markdown here
  (``SKIPPED_MARKDOWN_LIKE``: R Markdown, Quarto, Livebook, ``.mdtxt``...) are reported as
  warnings, never dropped silently.
* Pruned (``pruned_folder``, the one rule): dot-directories (``.git``, ``.venv``...), the
  folders tools create under fixed names (``node_modules``, ``__pycache__``, ``site-packages``),
  Python environments recognised by what they hold (``pyvenv.cfg``, conda's ``conda-meta``),
  never by a name a person may give a docs folder (``env/``, ``venv/``), and whatever ``.gitignore``
  files, ``.markdown-memory-ignore`` files and ``MARKDOWN_MEMORY_EXCLUDE`` globs exclude.
  Dot-files and editor temp files are skipped.
* Ignore files follow git (checked against ``git check-ignore`` by a property test): the
  patterns of a folder's ignore files apply to the paths below it, anchored ones (``/x.md``,
  ``a/b``) relative to that folder; the deepest ignore file with a line matching a path decides
  and within a file the last matching line wins, so ``!keep.md`` in ``guides/.gitignore``
  re-includes what the root's ``*.draft.md`` excluded; a line matches a path itself, never
  because it names a parent folder (``!*/`` keeps folders open, not the files in them); and a
  file in an excluded folder cannot be re-included, because excluded folders are not entered.
  In one folder ``.markdown-memory-ignore`` lines come after ``.gitignore`` lines (they win);
  ``MARKDOWN_MEMORY_EXCLUDE`` excludes whatever it matches. When the root is inside a git
  repository (or worktree), git's rules from outside it count too, below the root's own
  (``repo_ignore.py``: ``.gitignore`` files above the root, ``info/exclude``, ``core.excludesFile``).
* File names are bytes on Linux: a name that is not valid UTF-8 (Latin-1 archives, SMB shares)
  cannot be stored, searched or printed as it is, so such a file is skipped and reported as a
  warning under its ``ls -b`` style rendering (``caf\\xe9.md``, see ``printable_path``) that
  asks for a rename. Every other name (spaces, ``#``, ``%``, brackets, quotes, leading dashes,
  any Unicode) is indexed under its exact name.
* Symlinked directories are never followed (no loops, no second path to a tree); each one is
  reported as a warning so a user learns why a linked folder is absent. A symlinked
  file is indexed only when it resolves inside the root and its target is not indexed under
  its own path already (each real file once); dangling links and links leaving the root are
  reported as warnings.
* Only regular files are returned: FIFOs, sockets and devices are reported, never opened.
* An unreadable directory or file (no read permission) is reported and skipped; the walk
  goes on. Files are checked with ``access(R_OK)`` because a ``chmod`` changes neither size
  nor mtime, so an unchanged-looking file may have become unreadable.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pathspec

from .failure import Failure, FailureKind
from .repo_ignore import outer_specs

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mkd", ".mkdn", ".mdown", ".mkdown", ".mdwn")
#: Extensions of Markdown dialects that are not indexed; files with them are reported.
SKIPPED_MARKDOWN_LIKE = (".rmd", ".qmd", ".livemd", ".mdtxt", ".mdtext", ".markdn", ".ronn")
#: Folder names only tools create (npm, CPython, pip): never a hand-written docs folder.
PRUNED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})
#: A folder holding one of these is a Python environment (virtualenv/venv, conda).
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


def pruned_folder(directory: str | os.PathLike[str]) -> bool:
    """True when the walk does not enter ``directory``: hidden (``.git``...), a tool's folder
    (``PRUNED_DIRS``) or a Python environment (``ENVIRONMENT_MARKERS``: judged by its content,
    so a docs folder named ``env`` or ``venv`` is walked). May raise OSError."""
    name = os.path.basename(directory)
    if name.startswith(".") or name in PRUNED_DIRS:
        return True
    return any(os.path.lexists(os.path.join(directory, marker)) for marker in ENVIRONMENT_MARKERS)


@dataclass
class WalkEntry:
    rel: str  # POSIX path relative to the root
    abs: Path
    size: int
    mtime_ns: int
    ctime_ns: int = 0  # changes on any write, even one that restores size and mtime (cp -p)
    #: real path of the docs root and the POSIX path below it to open ("" = ``rel``; a
    #: symlinked file's target): ``files.read`` opens it from there without following links
    root: str = ""
    target: str = ""

    @property
    def signature(self) -> tuple[int, int, int]:
        """(size, mtime_ns, ctime_ns): equal signatures mean the file was not rewritten."""
        return (self.size, self.mtime_ns, self.ctime_ns)


@dataclass
class WalkResult:
    files: list[WalkEntry] = field(default_factory=list)
    problems: list[Failure] = field(default_factory=list)  # kind: UNREADABLE, SPECIAL or SYMLINK
    #: files left out by policy, not by failure (rel path as ``printable_path``, message)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    complete: bool = True
    #: mtime_ns of every folder walked, by POSIX path ("" = the root): a new, deleted or renamed
    #: file changes its folder's mtime, so a later stat of these finds files no index knows yet.
    dirs: dict[str, int] = field(default_factory=dict)
    root_real: str = ""  # realpath of the docs root


def stat_signature(st: os.stat_result) -> tuple[int, int, int]:
    """(size, mtime_ns, ctime_ns) of a stat result; compare with ``WalkEntry.signature``."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def is_markdown_name(name: str) -> bool:
    """True for a non-hidden Markdown file name (an extension of ``MARKDOWN_SUFFIXES``, any
    case) that is valid UTF-8 (see ``printable_path``)."""
    return not name.startswith(".") and name.lower().endswith(MARKDOWN_SUFFIXES) and name_is_text(name)


def name_is_text(name: str) -> bool:
    """False for a name that is not valid UTF-8 on disk: Python hands those out with lone
    surrogates (PEP 383), which SQLite, JSON and a terminal refuse."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(rel: str) -> str:
    """``rel`` with each byte that is not valid UTF-8 written as ``\\xNN`` (as ``ls -b`` does):
    ``caf\\xe9.md`` for the Latin-1 name ``caf\xe9.md``. Valid names come back unchanged."""
    if name_is_text(rel):
        return rel
    return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


#: Why a file is not indexed (warnings of the run).
UNDECODABLE_NAME = "file name is not valid UTF-8; skipped (rename the file to index it)"
UNDECODABLE_FOLDER = "folder name is not valid UTF-8; its files are skipped (rename the folder to index them)"


def _markdown_suffix(name: str) -> bool:
    return not name.startswith(".") and name.lower().endswith(MARKDOWN_SUFFIXES)


def skipped_markdown_like(name: str) -> str | None:
    """The warning for a Markdown-dialect file that is not indexed, else None."""
    if name.startswith("."):
        return None
    lower = name.lower()
    for suffix in SKIPPED_MARKDOWN_LIKE:
        if lower.endswith(suffix):
            return f"{suffix} files are not indexed (only {', '.join(MARKDOWN_SUFFIXES)}); rename it to .md to index it"
    return None


def _os_failure(rel: str, exc: OSError) -> Failure:
    """The walk's failure for an OSError on ``rel``: a link loop (ELOOP) is a symbolic link the
    walk does not follow, anything else leaves the path unreadable."""
    kind = FailureKind.SYMLINK if exc.errno == errno.ELOOP else FailureKind.UNREADABLE
    return Failure(rel, kind, describe_os_error(exc))


def describe_os_error(exc: OSError) -> str:
    """Short reason for an OSError: ``permission denied``, ``not found``... plus errno name."""
    names = {
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.ENOENT: "not found",
        errno.ELOOP: "too many levels of symbolic links",
        errno.EAGAIN: "resource temporarily unavailable (file not downloaded locally?)",
        errno.EISDIR: "is a directory",
        errno.EIO: "input/output error",
    }
    code = exc.errno if exc.errno is not None else 0
    text = names.get(code, exc.strerror or str(exc))
    name = errno.errorcode.get(code)
    return f"{text} ({name})" if name else text


#: Ignore files read in every folder, gitignore syntax. ``.markdown-memory-ignore`` excludes
#: files from the index that git should still track (test fixtures, vendored docs).
IGNORE_FILES = (".gitignore", ".markdown-memory-ignore")


#: Ignore files past this size are read up to it (a real one is a few hundred bytes).
MAX_IGNORE_BYTES = 1024 * 1024


def _ignore_spec(directory: Path) -> pathspec.PathSpec[Any] | None:
    """The patterns of ``directory``'s ignore files. Like git, a symlinked ignore file is not
    followed; a FIFO or device under that name is not read (opened without blocking, judged by
    ``fstat``), so it can neither stall nor flood the walk."""
    lines: list[str] = []
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    for name in IGNORE_FILES:
        try:
            fd = os.open(directory / name, flags)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                data = os.read(fd, MAX_IGNORE_BYTES)
                lines.extend(data.decode("utf-8", errors="replace").splitlines())
        except OSError:
            pass
        finally:
            os.close(fd)
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def walk_markdown(root: Path, exclude: list[str] | None = None, start: Path | None = None) -> WalkResult:
    """Markdown files under ``start`` (default: ``root``), sorted by path. Never raises for
    filesystem problems: they are returned in ``problems``."""
    root_real = Path(os.path.realpath(root))
    result = WalkResult(root_real=str(root_real))
    extra = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    seen_real: set[str] = set()
    pending_links: list[tuple[str, Path]] = []
    # Apply git's rules from above the root, then .gitignore files of the folders between root and start.
    specs: list[tuple[str, pathspec.PathSpec[Any]]] = outer_specs(root)
    top = start or root
    rel_top = "" if top == root else top.relative_to(root).as_posix()
    if rel_top:
        parts = rel_top.split("/")
        for k in range(len(parts)):
            spec = _ignore_spec(root.joinpath(*parts[:k]))
            if spec:
                specs.append(("/".join(parts[:k]), spec))
    root_spec = _ignore_spec(root) if not rel_top else None
    _walk_dir(top, rel_top, specs + ([("", root_spec)] if root_spec else []), extra, result, seen_real, pending_links)
    for rel, path in pending_links:
        _add_link(root_real, rel, path, result, seen_real)
    _screen_names(result)
    result.files.sort(key=lambda e: e.rel)
    return result


def _screen_names(result: WalkResult) -> None:
    """The one place names that are not valid UTF-8 leave the walk: such files become
    ``skipped`` entries, and every reported path is printable (module docstring)."""
    kept = []
    for entry in result.files:
        if name_is_text(entry.rel):
            kept.append(entry)
        else:
            why = UNDECODABLE_NAME if not name_is_text(entry.rel.rsplit("/", 1)[-1]) else UNDECODABLE_FOLDER
            result.skipped.append((printable_path(entry.rel), why))
    result.files = kept
    result.problems = [replace(f, path=printable_path(f.path)) for f in result.problems]
    result.skipped = [(printable_path(rel), why) for rel, why in result.skipped]


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec[Any]]], extra: pathspec.PathSpec[Any] | None) -> bool:
    """Git's verdict on one path whose parent folders are not excluded (the walk enters only
    those): ``specs`` are (folder, patterns) from the root down; the deepest one with a line
    matching the path itself decides, its last matching line winning (module docstring)."""
    candidate = rel + "/" if is_dir else rel
    if extra is not None and extra.match_file(candidate):
        return True
    for base, spec in reversed(specs):
        if base.startswith("/"):  # rules from above the root (``repo_ignore``): the root is base[1:] there
            sub = f"{base[1:]}/{candidate}" if len(base) > 1 else candidate
        else:
            sub = candidate[len(base) + 1 :] if base else candidate
        verdict = _last_match(spec, sub)
        if verdict is not None:
            return verdict
    return False


def _last_match(spec: pathspec.PathSpec[Any], candidate: str) -> bool | None:
    """True (excluded) / False (re-included by ``!``) by the last line of ``spec`` that matches
    ``candidate`` itself; None when no line does. A match through pathspec's directory mark
    (the ``/`` after a folder, then anything below it) names a parent folder, not the path:
    git judges parents when it enters them, so it does not count here."""
    for pattern in reversed(spec.patterns):
        include = getattr(pattern, "include", None)
        if include is None:
            continue
        probe = candidate
        if candidate.endswith("/") and str(getattr(pattern, "pattern", "")).rstrip().endswith("/**"):
            # git: ``b/**`` matches what is inside b, never b itself (pathspec's ``^b/`` would)
            probe = candidate[:-1]
        result = pattern.match_file(probe)
        if result is None:
            continue
        match = getattr(result, "match", None)
        if isinstance(match, re.Match) and "ps_d" in match.re.groupindex:
            end = match.end("ps_d")
            if end != -1 and end != len(probe):
                continue  # matched a parent folder of candidate
        return bool(include)
    return None


def _walk_dir(
    directory: Path,
    rel_dir: str,
    specs: list[tuple[str, pathspec.PathSpec[Any]]],
    extra: pathspec.PathSpec[Any] | None,
    result: WalkResult,
    seen_real: set[str],
    pending_links: list[tuple[str, Path]],
) -> None:
    try:
        result.dirs[rel_dir] = os.stat(directory).st_mtime_ns
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        result.problems.append(_os_failure(rel_dir or ".", exc))
        result.complete = False
        return
    if rel_dir:
        spec = _ignore_spec(directory)
        if spec is not None:
            specs = specs + [(rel_dir, spec)]
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            if entry.is_symlink():
                # Markdown-named links, and links to folders (reported, never followed).
                is_dir = entry.is_dir()
                if is_dir and pruned_folder(entry.path):
                    continue
                if (is_dir or is_markdown_name(entry.name)) and not _ignored(rel, is_dir, specs, extra):
                    pending_links.append((rel, Path(entry.path)))
                continue
            if entry.is_dir(follow_symlinks=False):
                if _ignored(rel, True, specs, extra) or pruned_folder(entry.path):
                    continue
                _walk_dir(Path(entry.path), rel, specs, extra, result, seen_real, pending_links)
                continue
            if not is_markdown_name(entry.name):
                if name_is_text(entry.name):
                    why = skipped_markdown_like(entry.name)
                else:
                    why = UNDECODABLE_NAME if _markdown_suffix(entry.name) else None
                if why and not _ignored(rel, False, specs, extra):
                    result.skipped.append((rel, why))
                continue
            if _ignored(rel, False, specs, extra):
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            result.problems.append(_os_failure(rel, exc))
            continue
        if not stat.S_ISREG(st.st_mode):
            result.problems.append(Failure(rel, FailureKind.SPECIAL, special_file_reason(st.st_mode)))
            continue
        if not os.access(entry.path, os.R_OK):
            # Caught here, not only at open(): a chmod leaves size and mtime alone, so the
            # indexer would otherwise keep serving the old text of a now-unreadable file.
            result.problems.append(_os_failure(rel, PermissionError(errno.EACCES, "permission denied")))
            continue
        # Symlinked folders are never followed, so a walked file's real path is the root's real
        # path plus its relative path: no realpath() call per file.
        seen_real.add(os.path.join(result.root_real, rel))
        result.files.append(WalkEntry(rel, Path(entry.path), st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                      result.root_real))


def _add_link(root_real: Path, rel: str, path: Path, result: WalkResult, seen_real: set[str]) -> None:
    """Policy for a symlinked Markdown file or folder (see module docstring)."""
    try:
        target = os.path.realpath(path)
    except OSError as exc:
        # realpath() lstat()s, then readlink()s: a link replaced in between (by a file, a FIFO)
        # raises EINVAL, uncaught by Python before 3.13 even when not strict. The path changed
        # during the run; the next run (or the watcher's event) reads it again.
        result.problems.append(Failure(rel, FailureKind.UNREADABLE,
                                       f"changed while being read: {describe_os_error(exc)}"))
        return
    inside = target == str(root_real) or target.startswith(str(root_real) + os.sep)
    if os.path.isdir(target):
        where = "inside" if inside else "outside"
        result.problems.append(Failure(
            rel, FailureKind.SYMLINK,
            f"symbolic link to a folder {where} the docs root; not followed (each real file is indexed once)",
        ))
        return
    try:
        st = os.stat(path)
    except OSError as exc:
        result.problems.append(Failure(rel, FailureKind.SYMLINK, f"dangling symbolic link: {describe_os_error(exc)}"))
        return
    if not inside:
        result.problems.append(Failure(rel, FailureKind.SYMLINK, "symbolic link to a file outside the docs root; not indexed"))
        return
    if target in seen_real:
        return  # the real file is indexed under its own path
    if not stat.S_ISREG(st.st_mode):
        result.problems.append(Failure(rel, FailureKind.SPECIAL, special_file_reason(st.st_mode)))
        return
    if not os.access(path, os.R_OK):
        result.problems.append(_os_failure(rel, PermissionError(errno.EACCES, "permission denied")))
        return
    seen_real.add(target)
    result.files.append(WalkEntry(rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, str(root_real),
                                  os.path.relpath(target, root_real).replace(os.sep, "/")))


def linked_part(root: Path, rel: str) -> str | None:
    """The first folder of POSIX path ``rel`` (below ``root``) that is a symbolic link, as a
    path relative to ``root``; None when there is none (or the path does not exist)."""
    parts = [p for p in rel.split("/") if p]
    for k in range(1, len(parts) + 1):
        try:
            if os.path.islink(root.joinpath(*parts[:k])):
                return "/".join(parts[:k])
        except (OSError, ValueError):
            return None
    return None


def special_file_reason(mode: int) -> str:
    """Why a Markdown-named path that is not a regular file is skipped, naming what it is
    (``mode`` from ``os.stat``): a folder, a FIFO, a socket or a device."""
    if stat.S_ISDIR(mode):
        what = "a folder, not a file"
    elif stat.S_ISFIFO(mode):
        what = "a FIFO (named pipe), not a regular file"
    elif stat.S_ISSOCK(mode):
        what = "a socket, not a regular file"
    else:
        what = "a device or other special file, not a regular file"
    return f"{what}; skipped"


def walk_one(root: Path, rel: str, exclude: list[str] | None = None) -> WalkEntry | str:
    """The walk's verdict on one path (POSIX, relative to ``root``) without walking the tree.

    Returns a WalkEntry when a full walk would index the file; otherwise a reason string: ``""``
    when the file is simply gone or out of scope (ignored, under a pruned or symlinked folder,
    not Markdown), a sentence when it exists but cannot be indexed (unreadable, not a regular
    file). Never raises.
    """
    parts = [p for p in rel.split("/") if p]
    if not parts or not is_markdown_name(parts[-1]) or any(p in ("..", ".") for p in parts) or not name_is_text(rel):
        return ""
    extra = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    specs: list[tuple[str, pathspec.PathSpec[Any]]] = outer_specs(root)
    directory = root
    for k, name in enumerate(parts[:-1]):
        spec = _ignore_spec(directory)
        if spec is not None:
            specs.append(("/".join(parts[:k]), spec))
        directory = directory / name
        sub = "/".join(parts[: k + 1])
        if _ignored(sub, True, specs, extra):
            return ""
        try:
            if directory.is_symlink() or not directory.is_dir() or pruned_folder(directory):
                return ""
        except OSError:
            return ""
    spec = _ignore_spec(directory)
    if spec is not None:
        specs.append(("/".join(parts[:-1]), spec))
    if _ignored(rel, False, specs, extra):
        return ""
    path = directory / parts[-1]
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return describe_os_error(exc)
    if stat.S_ISLNK(st.st_mode):
        # Links are judged by a full walk (target inside the root, not indexed twice); a link the
        # walk would refuse (dangling, looping, leading outside) keeps the walk's reason, so a
        # read names it instead of "no indexed document".
        verdict = WalkResult(root_real=os.path.realpath(root))
        _add_link(Path(verdict.root_real), rel, path, verdict, set())
        return verdict.problems[0].message if verdict.problems else ""
    if not stat.S_ISREG(st.st_mode):
        return special_file_reason(st.st_mode)
    if not os.access(path, os.R_OK):
        return "permission denied (EACCES)"
    return WalkEntry(rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, os.path.realpath(root))


class ScopeCheck:
    """Would a walk of ``root`` reach a path? The walk's own rules (``pruned_folder``, symbolic
    links to folders, the ignore files, the ``exclude`` globs, ``is_markdown_name``) applied to
    many single paths, as a file watcher needs: each folder's verdict and ignore files are read
    once per instance, so make a new one when an ignore file changes. ``rel`` arguments are
    POSIX paths relative to ``root``. A file's own verdict (symbolic link, readable, regular)
    stays with ``walk_one``. Never raises."""

    def __init__(self, root: Path, exclude: list[str] | None = None) -> None:
        self.root = root
        self._extra = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
        self._specs: dict[str, pathspec.PathSpec[Any] | None] = {}
        self._outer = outer_specs(root)
        self._folders: dict[str, bool] = {"": True}

    def _chain(self, rel_dir: str) -> list[tuple[str, pathspec.PathSpec[Any]]]:
        """(folder, patterns) of the ignore files from the root down to ``rel_dir`` included."""
        parts = rel_dir.split("/") if rel_dir else []
        out: list[tuple[str, pathspec.PathSpec[Any]]] = list(self._outer)
        for k in range(len(parts) + 1):
            sub = "/".join(parts[:k])
            if sub not in self._specs:
                self._specs[sub] = _ignore_spec(self.root / sub if sub else self.root)
            spec = self._specs[sub]
            if spec is not None:
                out.append((sub, spec))
        return out

    def folder(self, rel_dir: str) -> bool:
        """True when the walk enters folder ``rel_dir`` ("" = the root)."""
        known = self._folders.get(rel_dir)
        if known is not None:
            return known
        parent, _, _name = rel_dir.rpartition("/")
        verdict = self.folder(parent)
        if verdict:
            path = self.root / rel_dir
            try:
                verdict = not (_ignored(rel_dir, True, self._chain(parent), self._extra)
                               or path.is_symlink() or pruned_folder(path))
            except OSError:
                verdict = False
        self._folders[rel_dir] = verdict
        return verdict

    def file(self, rel: str) -> bool:
        """True when ``rel`` has a name the walk indexes in a folder it enters, not ignored."""
        parent, _, name = rel.rpartition("/")
        if not is_markdown_name(name) or not name_is_text(rel) or not self.folder(parent):
            return False
        return not _ignored(rel, False, self._chain(parent), self._extra)
