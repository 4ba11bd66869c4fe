"""Who reads an answer's sentences: the command they can type (:func:`program`) and the folder
they are in (:func:`working_folder`), which the sentences of ``messages`` name. In a process of
its own these are the process's facts; the resident service answering a CLI client in a thread
sets the client's for that thread (:func:`reader_view`), so it says what the client's own process
would say. Standard library only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: the reader's process facts while the resident service answers a CLI client in this thread
#: (:func:`reader_view`): its ``program`` and working folder, not the service's
_READER = threading.local()


@contextmanager
def reader_view(program: str, cwd: str) -> Iterator[None]:
    """While the block runs in this thread, :func:`program` is ``program`` and
    :func:`working_folder` is ``cwd``. Restored afterwards."""
    before = getattr(_READER, "view", None)
    _READER.view = (program, cwd)
    try:
        yield
    finally:
        _READER.view = before


def working_folder() -> Path:
    """The reader's working folder (the client's, in a :func:`reader_view`). Raises OSError when
    this process's own folder is gone."""
    view = getattr(_READER, "view", None)
    return Path(view[1]) if view is not None else Path.cwd()


def program() -> str:
    """The command that runs markdown-memory, as its reader can type it: ``markdown-memory`` when
    that name on PATH is the running executable (or nothing tells otherwise: ``python -m``, a
    library), else the running executable's absolute path, shell-quoted (a checkout's
    ``.venv/bin/markdown-memory``, not on PATH after ``scripts/setup.sh``); the client's, in a
    :func:`reader_view`."""
    view = getattr(_READER, "view", None)
    if view is not None:
        return str(view[0])
    name = "markdown-memory"
    running = sys.argv[0] if sys.argv else ""
    if os.path.basename(running) != name or not os.path.isfile(running):
        return name
    found = shutil.which(name)
    try:
        if found and os.path.samefile(found, running):
            return name
    except OSError:
        pass
    return shlex.quote(os.path.abspath(running))


@dataclass(frozen=True)
class Reader:
    """Who reads an answer's sentences, as a value passed to whatever words them (``messages``
    with a ``Context``): the ``program`` they type (shell-quoted), their working folder
    (``cwd``, None: unknown) and whether they are an agent calling MCP tools (``agent``) or a
    person at the CLI. :func:`here` is this process's reader."""

    program: str
    cwd: Path | None
    agent: bool = False


def here(agent: bool = False) -> Reader:
    """This process's reader (:func:`program`, :func:`working_folder`; None when the folder is gone)."""
    try:
        cwd: Path | None = working_folder()
    except OSError:
        cwd = None
    return Reader(program(), cwd, agent)
