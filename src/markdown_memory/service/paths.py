"""Where the resident service keeps its files: one runtime folder per user.

The folder is ``$MARKDOWN_MEMORY_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/markdown-memory``, else
``<tempdir>/markdown-memory-<uid>``. It is created with mode 0700 and refused when it is not a
real folder owned by this user (another user could otherwise put a socket there and answer our
clients). A folder the user names with ``$MARKDOWN_MEMORY_RUNTIME_DIR`` that already exists is
never chmod-ed: it is refused when others can write to it (``/tmp``, a shared 1777 folder); the
default folders (named for this tool) of ours are tightened to 0700. It holds:

* ``service.sock`` — the Unix socket (0600) the service listens on;
* ``service.lock`` — the lock the one service holds for its whole life (one service per user);
* ``service.log``  — the stderr of a service started by a client;
* ``service.port`` / ``service.token`` — the TCP fallback (no AF_UNIX, or
  ``MARKDOWN_MEMORY_SERVICE_TRANSPORT=tcp``): the loopback port and the secret every client
  sends (both 0600).

Imports only the standard library at module level (the clients' path must stay light: the
``ConfigError`` raised here is imported when raised).
"""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path
from typing import NoReturn

#: the longest path an AF_UNIX socket address can hold on Linux (108 bytes with the NUL; macOS: 104)
MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107

#: environment: the runtime folder (tests set it), the transport ("unix" or "tcp")
RUNTIME_DIR_ENV = "MARKDOWN_MEMORY_RUNTIME_DIR"
TRANSPORT_ENV = "MARKDOWN_MEMORY_SERVICE_TRANSPORT"


def _refuse(message: str) -> NoReturn:
    """Raise ConfigError(message) (imported here: the clients' imports stay light)."""
    from ..errors import ConfigError

    raise ConfigError(message)


def _uid() -> int | None:
    """This process's uid, or None where there are no uids (Windows)."""
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else None


def runtime_dir(*, create: bool = True) -> Path:
    """The per-user runtime folder (see the module docstring), created 0700 when ``create``.

    Raises ConfigError when the folder cannot be created, is not a folder (a symlink included),
    belongs to another user, or is an existing ``$MARKDOWN_MEMORY_RUNTIME_DIR`` that group or
    others can write to. A folder made here, or a default one of ours with looser permissions,
    is set to 0700; an existing folder the user named is left as it is.
    """
    explicit = os.environ.get(RUNTIME_DIR_ENV, "").strip()
    xdg = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    uid = _uid()
    if explicit:
        folder = Path(explicit)
    elif xdg:
        folder = Path(xdg) / "markdown-memory"
    else:
        import tempfile  # only here: its imports cost a few milliseconds on every client start

        folder = Path(tempfile.gettempdir()) / f"markdown-memory-{uid if uid is not None else 'user'}"
    made = False
    if create:
        try:
            folder.mkdir(mode=0o700, parents=bool(explicit or xdg))
            made = True
        except FileExistsError:
            pass
        except OSError as exc:
            _refuse(f"cannot create the service's runtime folder {folder}: {exc.strerror or exc}")
    _check_owner(folder, tighten=made or not explicit)
    return folder


def _check_owner(folder: Path, *, tighten: bool) -> None:
    """Refuse ``folder`` unless it is a real folder owned by this user; with ``tighten`` (a folder
    made here or a default one of ours) set it to 0700, else refuse it when group or others can
    write to it (nothing is chmod-ed in a folder the user named)."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        return  # not created (create=False): nothing to trust or refuse yet
    except OSError as exc:
        _refuse(f"cannot read the service's runtime folder {folder}: {exc.strerror or exc}")
    if not stat.S_ISDIR(info.st_mode):
        _refuse(f"the service's runtime folder {folder} is not a folder (a link or a file); remove it "
                          f"or set {RUNTIME_DIR_ENV} to another folder")
    uid = _uid()
    if uid is None:
        return
    if info.st_uid != uid:
        _refuse(f"the service's runtime folder {folder} belongs to another user (uid {info.st_uid}); "
                          f"set {RUNTIME_DIR_ENV} to a folder of your own")
    mode = stat.S_IMODE(info.st_mode)
    if tighten and mode & 0o077:
        os.chmod(folder, 0o700)
    elif not tighten and mode & 0o022:
        _refuse(f"the service's runtime folder {folder} ({RUNTIME_DIR_ENV}) can be written by other users "
                f"(mode {mode:o}); set {RUNTIME_DIR_ENV} to a folder only you can write (a new one is made "
                f"0700, e.g. {folder / f'markdown-memory-{uid}'}), or unset it")


def socket_path() -> Path:
    """``runtime_dir()/service.sock``: the Unix socket."""
    return runtime_dir() / "service.sock"


def lock_path() -> Path:
    """``runtime_dir()/service.lock``: held by the running service."""
    return runtime_dir() / "service.lock"


def log_path() -> Path:
    """``runtime_dir()/service.log``: stderr of a service a client started."""
    return runtime_dir() / "service.log"


def port_path() -> Path:
    """``runtime_dir()/service.port``: the loopback port of the TCP transport (decimal text)."""
    return runtime_dir() / "service.port"


def token_path() -> Path:
    """``runtime_dir()/service.token``: the TCP transport's secret (0600)."""
    return runtime_dir() / "service.token"


def open_private(path: Path, flags: int) -> int:
    """``os.open(path, flags)`` for a file of the runtime folder, never through a link: with
    ``O_NOFOLLOW`` and ``O_CLOEXEC`` (a file created is 0600), and refused unless what was opened
    is a regular file of this user with no other hard link (a link planted at ``path`` would
    make the service truncate, chmod or append to the file it points at). Returns the file
    descriptor. Raises ConfigError for a link (symbolic or hard) or another kind of file,
    OSError as ``os.open`` (FileNotFoundError without ``O_CREAT``)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | nofollow | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        if not (nofollow and os.path.islink(path)):  # ELOOP (Linux) / EMLINK (FreeBSD) for a link
            raise
        _refuse(_not_ours(path, "a symbolic link"))
    info = os.fstat(fd)
    uid = _uid()
    why = ("not a regular file" if not stat.S_ISREG(info.st_mode) else
           "a hard link to another file" if info.st_nlink > 1 else
           f"owned by another user (uid {info.st_uid})" if uid is not None and info.st_uid != uid else None)
    if why is not None:
        os.close(fd)
        _refuse(_not_ours(path, why))
    return fd


def _not_ours(path: Path, why: str) -> str:
    """The sentence refusing the runtime folder's file at ``path`` because it is ``why``."""
    return (f"the service's file {path} is {why}; it is not used (nothing is followed through a link "
            f"in the runtime folder): remove it, or set {RUNTIME_DIR_ENV} to another folder")


def read_private(path: Path) -> str:
    """The text of the runtime folder's file at ``path`` (:func:`open_private`). Raises
    ConfigError as it, OSError (FileNotFoundError: absent)."""
    with os.fdopen(open_private(path, os.O_RDONLY), encoding="ascii") as handle:
        return handle.read()


def refuse_linked_socket(path: Path) -> None:
    """Raise ConfigError when the socket path ``path`` is a symbolic link (a client must not
    connect wherever it points); nothing or a real socket there is fine."""
    if os.path.islink(path):
        _refuse(_not_ours(path, "a symbolic link"))


def transport() -> str:
    """``"unix"`` or ``"tcp"``: TCP where there is no AF_UNIX, when
    ``MARKDOWN_MEMORY_SERVICE_TRANSPORT=tcp``, or when the socket's path is too long for an AF_UNIX
    address (a deep runtime folder). Raises ConfigError as :func:`runtime_dir`."""
    wanted = os.environ.get(TRANSPORT_ENV, "").strip().lower()
    if wanted == "tcp" or not hasattr(socket, "AF_UNIX"):
        return "tcp"
    if len(os.fsencode(socket_path())) > MAX_SOCKET_PATH:
        return "tcp"
    return "unix"
