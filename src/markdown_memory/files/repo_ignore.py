"""The ignore rules git applies to a docs root from outside it (case 057).

A docs root is usually ``repo/docs``. Git also honours, for every path below it:
the ``.gitignore`` files of the folders from the repository's top down to the root's parent,
``$GIT_COMMON_DIR/info/exclude`` (in a linked worktree ``.git`` is a file, ``gitdir: ...``, whose
``commondir`` names the repository's common git folder), and the file named by
``core.excludesFile`` (system, XDG, global and repository config, last one wins, with git's
``GIT_CONFIG_NOSYSTEM`` and ``GIT_CONFIG_GLOBAL``; default
``$XDG_CONFIG_HOME/git/ignore``, else ``~/.config/git/ignore``). Precedence follows git: a
deeper ``.gitignore`` beats a shallower one, every ``.gitignore`` beats ``info/exclude``, which
beats ``core.excludesFile``. Outside a git repository none of them applies (nor does git).

:func:`outer_specs` returns them as ``(base, patterns)`` pairs for ``walk._ignored``: ``base``
is ``"/"`` + the docs root's path below the rules' folder (``"/docs"``; ``"/"`` for the root
itself), shallowest (lowest precedence) first. Results are cached per root and re-read when
one of the files changes (size, mtime).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pathspec

#: Ignore files past this size are read up to it (a real one is a few hundred bytes).
MAX_IGNORE_BYTES = 1024 * 1024
_SYSTEM_CONFIG = "/etc/gitconfig"

Specs = list[tuple[str, "pathspec.PathSpec[Any]"]]
_cache: dict[str, tuple[tuple[Any, ...], Specs]] = {}


def _read(path: str, *, follow: bool) -> list[str] | None:
    """Lines of a regular file (opened without blocking; links followed only when ``follow``),
    None when it is absent or not a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, MAX_IGNORE_BYTES).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    finally:
        os.close(fd)


def find_repository(root: Path) -> tuple[Path, Path] | None:
    """(work tree top, common git folder) of the repository holding ``root`` (its real path,
    searched upwards as git does), or None outside any repository."""
    here = Path(os.path.realpath(root))
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        try:
            mode = os.lstat(dot_git).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            return folder, dot_git
        if stat.S_ISREG(mode):
            lines = _read(str(dot_git), follow=False) or []
            first = lines[0].strip() if lines else ""
            if not first.startswith("gitdir:"):
                return None
            git_dir = (folder / first[len("gitdir:"):].strip()).resolve()
            common = _read(str(git_dir / "commondir"), follow=False)
            if common and common[0].strip():
                return folder, (git_dir / common[0].strip()).resolve()
            return folder, git_dir
    return None


def _config_excludes_file(common: Path) -> str:
    """The path ``core.excludesFile`` names (last config file that sets it wins), else git's
    default."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    chosen = os.path.join(xdg, "git", "ignore")
    # git's own switches: GIT_CONFIG_NOSYSTEM drops the system file, GIT_CONFIG_GLOBAL replaces
    # the global ones
    system = [] if os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() in ("1", "true", "yes") else [_SYSTEM_CONFIG]
    forced = os.environ.get("GIT_CONFIG_GLOBAL")
    user = [forced] if forced else [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    for config in (*system, *user, str(common / "config")):
        value = _core_setting(_read(config, follow=True) or [], "excludesfile")
        if value:
            chosen = os.path.expanduser(value)
    return chosen


def _core_setting(lines: list[str], key: str) -> str | None:
    """The last value of ``key`` (lower case) in the ``[core]`` section of git config lines."""
    section, found = "", None
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line[1:line.find("]")].strip().lower() if "]" in line else ""
            line = line[line.find("]") + 1:].strip() if "]" in line else ""
            if not line:
                continue
        name, sep, value = line.partition("=")
        if section == "core" and sep and name.strip().lower() == key:
            value = value.split(" #")[0].split(" ;")[0].strip()
            found = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return found


def outer_specs(root: Path) -> Specs:
    """Git's ignore rules from outside ``root`` (module docstring), lowest precedence first."""
    found = find_repository(root)
    if found is None:
        return []
    top, common = found
    real = Path(os.path.realpath(root))
    below = real.relative_to(top).as_posix() if real != top else ""
    parts = below.split("/") if below else []
    sources: list[tuple[str, str, bool]] = [(_config_excludes_file(common), "", True),
                                            (str(common / "info" / "exclude"), "", False)]
    for k in range(len(parts)):
        sources.append((str(top.joinpath(*parts[:k]) / ".gitignore"), "/".join(parts[:k]), False))
    signature = tuple(_signature(path) for path, _, _ in sources) + (str(top), below)
    cached = _cache.get(str(real))
    if cached is not None and cached[0] == signature:
        return list(cached[1])  # a new list: callers append their own folders' rules
    specs: Specs = []
    for path, folder, follow in sources:
        lines = _read(path, follow=follow)
        if lines:
            # the root's path as seen from the rules' folder: "/docs" for repo/.gitignore
            rest = below[len(folder):].lstrip("/") if folder else below
            specs.append(("/" + rest, pathspec.GitIgnoreSpec.from_lines(lines)))
    _cache[str(real)] = (signature, specs)
    return list(specs)


def _signature(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)
