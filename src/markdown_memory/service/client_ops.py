"""The service's operations for the thin clients: ``hook`` (the prompt hook) and ``search`` (the
CLI command). Each runs the same code as the client would in process and answers what that
process would print, so a client that falls back prints the same thing.

* ``hook`` fields ``{"settings", "stdin", "max_tokens"}`` -> ``{"stdout": str|null, "stderr": str|null}``:
  ``hook.inject`` on the pooled engine of ``settings`` (the MCP sessions' engine: background
  mode, its model loaded once, so the hook searches with vectors).
* ``search`` fields ``{"settings", ...search_text.CliSearch wire form ("request", "output"), "program", "cwd"}`` ->
  ``{"stdout": str, "stderr": str, "exit": int}``: ``search_text.run_search`` on a
  foreground engine of ``settings`` in the service's pool (the CLI's semantics: index changed
  files first, a person's wording of every message; the model is the process's shared one).
  The client's ``program`` and ``cwd`` word the messages as its own process would; the
  warnings its process would log are collected from this thread's records into ``stderr``.

Light at import (the service registers these before any engine exists): the engine is imported
by the handlers.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..engine import Engine
    from .server import Service

log = logging.getLogger("markdown_memory.service")



def _settings(fields: dict[str, Any]) -> Settings:
    """The request's ``settings``. Raises ConfigError when missing or unreadable."""
    from ..config import Settings

    data = fields.get("settings")
    if not isinstance(data, dict):
        raise ConfigError("the request has no settings object")
    return Settings.from_wire(data)


def hook(service: Service, fields: dict[str, Any]) -> dict[str, str | None]:
    """Op ``hook`` (see module docstring). Never raises for a prompt: a failure is the stderr
    line the hook would print (ConfigError for unreadable settings)."""
    from .. import messages
    from ..hook import PayloadError, gate, inject, parse

    settings = _settings(fields)
    try:
        payload = parse(str(fields.get("stdin") or ""))
    except PayloadError as exc:
        return {"stdout": None, "stderr": str(exc)}
    if not gate.asks_docs(payload.prompt):
        return {"stdout": None, "stderr": None}
    try:
        engine = service.engine(settings)
        try:
            out, err = inject(engine, payload, int(fields.get("max_tokens") or 800))
        finally:
            engine.close()  # this thread's connection (the engine stays in the pool)
    except Exception as exc:  # a locked, damaged or foreign database: as the hook says it in process
        out, err = None, messages.hook_failed(str(exc) or type(exc).__name__)
    return {"stdout": out, "stderr": err}


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


def search(service: Service, fields: dict[str, Any]) -> dict[str, Any]:
    """Op ``search`` (see module docstring). A user's mistake (a bad filter, a missing docs
    root) is the output the CLI prints for it (exit 2), not an error reply; ConfigError for
    unreadable settings or parameters."""
    from ..errors import MarkdownMemoryError
    from ..progress import Progress
    from ..reader import Reader
    from ..search_text import CliSearch, error_output, run_search

    settings = _settings(fields)
    try:
        params = CliSearch.from_wire(fields)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the search request could not be read: {exc}") from exc
    reader = Reader(str(fields.get("program") or "markdown-memory"), Path(str(fields.get("cwd") or "/")))
    with _stderr_of_this_thread() as stderr:
        engine: Engine | None = None
        try:
            engine = service.engine(settings, foreground=True)
            out, status = run_search(engine, params, Progress(stderr), reader), 0
        except MarkdownMemoryError as exc:
            out, err, status = error_output(exc, params.output.json)
            stderr.write(err)
        finally:
            if engine is not None:
                engine.close()  # this thread's connection
    return {"stdout": out, "stderr": stderr.getvalue(), "exit": status}


#: the ops this module adds to ``service.ops.OPS``
OPS = {"hook": hook, "search": search}
