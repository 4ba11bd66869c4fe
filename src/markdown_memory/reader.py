"""Who reads an answer's sentences: the command they can type (:func:`program`) and the folder
they are in (:func:`working_folder`), which the sentences of ``messages`` name. :class:`Reader`
is that as a value, passed explicitly (``Engine.search(reader=...)``, ``messages.Context``):
the resident service answering a CLI client passes the client's, so it says what the
client's own process would say; :func:`here` is this process's. Standard library only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def working_folder() -> Path:
    """This process's working folder. Raises OSError when it is gone."""
    return Path.cwd()


def program() -> str:
    """The command that runs markdown-memory, as its reader can type it: ``markdown-memory`` when
    that name on PATH is the running executable (or nothing tells otherwise: ``python -m``, a
    library), else the running executable's absolute path, shell-quoted (a checkout's
    ``.venv/bin/markdown-memory``, not on PATH after ``scripts/setup.sh``)."""
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


class ProgramSentence(str):
    """A sentence naming the command its reader types (``run `markdown-memory
    --download-model```), made deep down (a model's files checked, an error raised) where the
    reader is not known: as text it names this process's :func:`program`; :func:`for_reader`
    words it for another reader (the resident service's client, whose command may be a path).
    ``words(program)`` is the sentence for a program. A plain ``str`` once formatted into
    another string: keep it whole up to where the reader is known."""

    words: Callable[[str], str]

    def __new__(cls, words: Callable[[str], str]) -> ProgramSentence:
        sentence = super().__new__(cls, words(program()))
        sentence.words = words
        return sentence


def for_reader(text: str | None, name: str) -> str | None:
    """``text`` for a reader who types ``name`` (:attr:`Reader.program`): a
    :class:`ProgramSentence` in its words for them, any other text as it is."""
    return text.words(name) if isinstance(text, ProgramSentence) else text


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
