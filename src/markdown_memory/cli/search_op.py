"""The resident service's ``search`` op (registered by ``cli/serve.py``; ``cli/remote.py`` is its
client): the CLI's search on a foreground engine of the settings in the service's pool (the
CLI's semantics: index changed files first; the model is the process's shared one).

Request :class:`SearchCall`, reply :class:`SearchReply`: the answer's wire form (or the facts of
a user's mistake) and what the search wrote to stderr; the client renders it
(``search_text.answer_output``), so it prints what its own process would. The client's
``program`` and ``cwd`` (a ``reader.Reader`` passed to ``Engine.search``) word the answer's
sentences as its own process would; the warnings its
process would log (an unreadable file met by the refresh) are collected from this thread's
records into ``stderr``, as is the progress line.

Light at import (the service registers it before any engine exists): the engine is imported by
the handler.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..search_text import CliSearch
from ..service.ops import Op, ServiceContext


@dataclass(frozen=True)
class SearchCall:
    """One CLI search: the client's ``settings``, its parsed arguments (``params``: the
    ``SearchRequest`` and the output options; on the wire ``CliSearch.to_wire()``), and who reads
    the answer (the command it runs as, ``program``; its working folder, ``cwd``)."""

    settings: Settings
    params: CliSearch
    program: str = "markdown-memory"
    cwd: str = "/"


@dataclass(frozen=True)
class SearchFailure:
    """A user's mistake (a bad filter, a missing docs root): ``payload`` the ``--json`` error
    object, ``sentence`` the stderr line after ``markdown-memory: ``, ``exit`` the status."""

    payload: dict[str, object]
    sentence: str
    exit: int


@dataclass(frozen=True)
class SearchReply:
    """``answer``: ``SearchAnswer.to_dict()``, or None with ``failure``; ``stderr``: what the
    search wrote there (warnings, progress); ``embedder_news``: the answer's embedder reason
    says the preset changed (``search_text.embedder_news_of``: the client does not import the
    sentences it compares with)."""

    answer: dict[str, object] | None = None
    failure: SearchFailure | None = None
    stderr: str = ""
    embedder_news: bool = False


class _ThisThread(logging.Handler):
    """Collects the records logged by one thread, as the CLI's stderr handler formats them."""

    def __init__(self, stream: io.StringIO) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.stream = stream
        self.setFormatter(logging.Formatter("markdown-memory: %(message)s"))

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread == self.thread

    def emit(self, record: logging.LogRecord) -> None:
        self.stream.write(self.format(record) + "\n")


@contextmanager
def _stderr_of_this_thread() -> Iterator[io.StringIO]:
    """The warnings this thread logs under ``markdown_memory`` while the block runs."""
    stream = io.StringIO()
    handler = _ThisThread(stream)
    logger = logging.getLogger("markdown_memory")
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def search(service: ServiceContext, call: SearchCall) -> SearchReply:
    """The search's answer (or failure) and its stderr (module docstring)."""
    from ..errors import MarkdownMemoryError
    from ..progress import Progress
    from ..reader import Reader
    from ..search_text import embedder_news_of, error_facts, search_answer

    reader = Reader(call.program, Path(call.cwd))
    with _stderr_of_this_thread() as stderr:
        engine = None
        try:
            engine = service.engine(call.settings, foreground=True)
            answer = search_answer(engine, call.params, Progress(stderr), reader).to_dict()
            return SearchReply(answer=answer, stderr=stderr.getvalue(), embedder_news=embedder_news_of(answer))
        except MarkdownMemoryError as exc:
            payload, sentence, status = error_facts(exc, call.program)  # worded for the client's command
            return SearchReply(failure=SearchFailure(payload, sentence, status), stderr=stderr.getvalue())
        finally:
            if engine is not None:
                engine.close()  # this thread's connection


OP = Op("search", SearchCall, search)
