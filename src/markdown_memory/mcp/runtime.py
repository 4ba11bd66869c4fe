"""What the MCP tools do: one lazily created engine, one engine call per tool, the answer as
its model's agent view, and every failure as one error result.

Nothing heavy is imported here: the engine (numpy, sqlite-vec, ...) is imported and created in
a thread once the handshake is done (:meth:`Runtime.start_catch_up`) or by the first tool
call, so the MCP handshake never pays for the engine, the database or the model. Each tool body runs in a worker thread; the engine keeps one SQLite connection per
thread. The engine runs in background mode (model warm-up in a thread, passage vectors in
memory, catch-up indexing when auto-index is on); its freshness policy is ``REFRESH`` with
auto-index on, ``FLAG`` (stale hits flagged) with it off.

Session memory: a stdio server lives as long as one agent session, so :class:`SessionMemory`
remembers which section texts ``search_docs`` already sent in full; later searches send those
as pointers marked ``already_sent`` (``resend=True`` turns it off for one call).
``read_section`` always returns the text. The CLI has no session and no memory.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import IndexBusyError, describe_error
from .progress import PROGRESS_INTERVAL_SECONDS as PROGRESS_INTERVAL_SECONDS  # re-exported
from .progress import ToolProgress as ToolProgress  # re-exported

if TYPE_CHECKING:  # pragma: no cover
    from mcp_types import CallToolResult

    from ..engine import Engine
    from ..models import Freshness, Hit, SearchRequest

log = logging.getLogger("markdown_memory.server")

#: index_directory waits this long for another process's writer lock (seconds)
INDEX_LOCK_WAIT_SECONDS = 0.5


#: SessionMemory keeps at most this many section texts (the oldest are forgotten first)
SESSION_MEMORY_MAX = 10_000


class SessionMemory:
    """The section texts this server's session already received in full, as
    ``search.section_key`` strings (file, breadcrumb, hash of the text: an unchanged section
    keeps its key across re-indexing, an edited one gets a new key and is sent again).
    Bounded (:data:`SESSION_MEMORY_MAX`, oldest first out) and thread-safe: tool bodies run in
    worker threads. ``key in memory`` is what the packer asks."""

    def __init__(self, limit: int = SESSION_MEMORY_MAX) -> None:
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._keys

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)

    def remember(self, hits: Iterable[Hit]) -> None:
        """Record every hit that carries its text (``content`` not None)."""
        from ..search import section_key

        keys = [section_key(h.file_path, h.heading_path, h.content) for h in hits if h.content is not None]
        with self._lock:
            for key in keys:
                self._keys[key] = None
                self._keys.move_to_end(key)
            while len(self._keys) > self._limit:
                self._keys.popitem(last=False)


#: The MCP session a tool call belongs to: its ``Mcp-Session-Id`` over streamable HTTP, set by
#: the server around each call (``server.build_server``) and seen by the worker thread running
#: the body (anyio copies the context); None on stdio (one process, one session). A runtime
#: serving several sessions (the HTTP endpoint: one runtime per docs root) keeps one
#: :class:`SessionMemory` per session.
CURRENT_SESSION: ContextVar[str | None] = ContextVar("markdown_memory_mcp_session", default=None)
#: a runtime remembers the sent texts of at most this many sessions (the least recently used is
#: forgotten first: its next search sends full texts again, which is safe)
SESSIONS_REMEMBERED = 32


def dumps(data: Any) -> str:
    """Compact JSON (no spaces, UTF-8 kept): the text of every tool result."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class Runtime:
    """Per-server state: the engine (created on first use) and the tool bodies. Tool bodies
    return a JSON-able dict or raise; :meth:`call` turns both into a ``CallToolResult``."""

    def __init__(self, settings: Settings, startup_error: Exception | None = None, *,
                 engine_factory: Callable[[Settings], Engine] | None = None) -> None:
        self.settings = settings
        #: makes the engine on first use (the resident service hands out its shared engine per
        #: docs root); None: a new ``Engine(settings, background=True)`` of this process
        self._engine_factory = engine_factory
        #: raised by every tool call (settings could not be resolved, e.g. a refused docs root)
        self.startup_error = startup_error
        self._engine: Engine | None = None
        self._engine_lock = threading.Lock()
        #: section texts search_docs already sent in full, per session (see CURRENT_SESSION)
        self._memory = SessionMemory()
        self._memories: OrderedDict[str, SessionMemory] = OrderedDict()
        self._memories_lock = threading.Lock()

    def start_catch_up(self) -> None:
        """Once the MCP handshake is done: create the engine and start its catch-up index run
        in a daemon thread (with auto-index on, and no start-up error), so a never-indexed docs
        root gets indexed without a tool call. Returns at once: the handshake never waits for
        the engine's imports, the database or the walk; a tool call arriving meanwhile waits
        only for the engine's creation (its lock)."""
        if self.startup_error is not None or not self.settings.auto_index:
            return

        def catch_up() -> None:
            try:
                if self.engine.start_catch_up():
                    log.info("handshake done: started the catch-up index run of %s", self.settings.docs_root)
            except Exception as exc:  # noqa: BLE001 - the first tool call reports it again
                log.warning("could not start the catch-up index run: %s", describe_error(exc).message)

        threading.Thread(target=catch_up, name="catch-up-start", daemon=True).start()

    @property
    def memory(self) -> SessionMemory:
        """The section texts search_docs already sent in full in the current session
        (:data:`CURRENT_SESSION`); each session of a runtime has its own."""
        session = CURRENT_SESSION.get()
        if session is None:
            return self._memory
        with self._memories_lock:
            memory = self._memories.get(session)
            if memory is None:
                memory = self._memories[session] = SessionMemory()
                while len(self._memories) > SESSIONS_REMEMBERED:
                    self._memories.popitem(last=False)
            self._memories.move_to_end(session)
            return memory

    @property
    def freshness(self) -> Freshness:
        """``REFRESH`` with auto-index on, else ``FLAG`` (imported lazily, off the handshake path)."""
        from ..models import Freshness

        return Freshness.REFRESH if self.settings.auto_index else Freshness.FLAG

    @property
    def engine(self) -> Engine:
        """The engine, created by the first call. Raises ``startup_error`` when set."""
        if self.startup_error is not None:
            raise self.startup_error
        with self._engine_lock:
            if self._engine is None:
                if self._engine_factory is not None:
                    self._engine = self._engine_factory(self.settings)
                else:
                    from ..engine import Engine

                    self._engine = Engine(self.settings, background=True)
            return self._engine

    # -- plumbing ---------------------------------------------------------------------------
    async def call(self, tool: str, fn: Callable[[], dict[str, Any]]) -> CallToolResult:
        """Run ``fn`` in a worker thread; its answer (cut to the client's output limit,
        ``fit.py``), or its exception as an error result."""
        import anyio
        from mcp_types import CallToolResult, TextContent

        from .fit import fit_answer

        started = time.monotonic()
        try:
            data = fit_answer(await anyio.to_thread.run_sync(self._recovering(fn)))  # the client's size limit
            is_error = False
        except Exception as exc:  # noqa: BLE001 - every failure becomes one tool error result
            report = describe_error(exc)
            if report.expected:
                log.info("%s: %s", tool, exc)
            else:
                log.error("%s failed", tool, exc_info=exc)
            data = report.tool_payload(tool)
            is_error = True
        log.debug("%s answered in %.3f s%s", tool, time.monotonic() - started, " (error)" if is_error else "")
        return CallToolResult(content=[TextContent(type="text", text=dumps(data))], is_error=is_error)

    def _recovering(self, fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        """``fn``, retried once when it failed because the database file was damaged under the
        running server (``Engine.recover_damaged`` moved it aside; the retry answers from the
        empty database, saying it is being rebuilt)."""
        def run() -> dict[str, Any]:
            try:
                return fn()
            except Exception as exc:
                if self._engine is None or not self._engine.recover_damaged(exc):
                    raise
                return fn()
        return run

    def request_stop(self) -> None:
        """Ask running index runs (catch-up or index_directory) to stop at the next file. A
        runtime whose engine came from ``engine_factory`` (the resident service's shared engine,
        serving other sessions too) leaves it running."""
        if self._engine is not None and self._engine_factory is None:
            self._engine.request_stop()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Ask background work to stop; True when it finished within ``timeout`` seconds
        (model loading cannot be interrupted and is not waited for). A shared engine (see
        :meth:`request_stop`) is left running: its owner stops it."""
        self.request_stop()
        if self._engine is None or self._engine_factory is not None:
            return True
        return self._engine.shutdown(timeout)

    # -- tools ------------------------------------------------------------------------------
    def search_docs(self, request: SearchRequest) -> dict[str, Any]:
        """Texts already sent in this session come as ``already_sent`` pointers unless the
        request says ``resend``."""
        answer = self.engine.search(request, freshness=self.freshness, already_sent=self.memory)
        self.memory.remember(answer.results)
        return answer.to_dict(agent=True)

    def answer(self, tool: str, arguments: Mapping[str, object]) -> dict[str, Any]:
        """Tool ``tool`` called in this thread with ``arguments`` (validated by its input model,
        ``tools.SPECS``): its JSON answer. Raises pydantic's ValidationError for refused
        arguments and what the engine call raises. For tests and embedders; the server goes
        through the SDK."""
        from .tools import SPECS

        spec = SPECS[tool]
        return spec.run(self, spec.input.model_validate(arguments), None)

    def docs_map(self) -> str:
        """The text of the ``docs://map`` resource: the docs map, or the sentence saying why there
        is none (a refused docs root, an unreadable index); never raises."""
        from .. import messages

        try:
            return self.engine.docs_map(freshness=self.freshness).text
        except Exception as exc:  # noqa: BLE001 - a resource read answers with the reason
            report = describe_error(exc)
            if not report.expected:
                log.error("docs://map failed", exc_info=exc)
            return messages.map_unavailable(str(exc) if report.expected else None)

    def index_directory(self, directory: str | None, force: bool,
                        progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
        from .. import messages
        from ..models import IndexOutcome

        engine = self.engine
        try:
            report = engine.index(directory, force=force, wait_seconds=INDEX_LOCK_WAIT_SECONDS, progress=progress,
                                  should_stop=lambda: engine.stopping, if_idle=True)
        except IndexBusyError as exc:
            return IndexOutcome(None, engine.status(), messages.index_in_progress(str(exc))).to_dict()
        return IndexOutcome(report, engine.status()).to_dict()
