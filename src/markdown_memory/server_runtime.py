"""What the MCP tools do: one lazily created engine, result shaping, error mapping, and the
server's background work (model warm-up, first-run catch-up indexing).

Nothing heavy is imported here: the engine (numpy, sqlite-vec, ...) is imported and created by
the first tool call, so the MCP handshake never pays for the engine, the database or the
model. Each tool body runs in a worker thread; the engine keeps one SQLite connection per
thread.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from .config import Settings
from .errors import IndexBusyError, MarkdownMemoryError, QueryError, RootMismatchError

if TYPE_CHECKING:  # pragma: no cover
    from .server_engine import ServerEngine

log = logging.getLogger("markdown_memory.server")

#: How long a search waits for a first-run catch-up to finish parsing (keyword index ready).
CATCH_UP_WAIT_SECONDS = 5.0
#: Fields of ``Engine.status()`` an agent gets as ``index_status``.
STATUS_FIELDS = ("root", "documents", "sections", "passages", "vectors", "indexing", "coverage", "changed_files",
                 "failures", "last_run", "embedder", "keyword_only", "message")


def dumps(data: Any) -> str:
    """Compact JSON (no spaces, UTF-8 kept) — the text of every tool result."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class Runtime:
    """Per-server state: the engine (created on first use), background threads, tool bodies.

    Tool bodies return a JSON-able dict or raise; :meth:`call` turns both into a
    ``CallToolResult``.
    """

    def __init__(self, settings: Settings, startup_error: Exception | None = None) -> None:
        self.settings = settings
        #: raised by every tool call (settings could not be resolved, e.g. a refused docs root)
        self.startup_error = startup_error
        self._engine: ServerEngine | None = None
        self._engine_lock = threading.Lock()
        self._stop = threading.Event()
        self._catch_up: threading.Thread | None = None
        self._catch_up_lock = threading.Lock()
        self._auto: Any = None  # autoindex.AutoIndexer, created by the first search/list call

    @property
    def engine(self) -> ServerEngine:
        if self.startup_error is not None:
            raise self.startup_error
        with self._engine_lock:
            if self._engine is None:
                from .server_engine import ServerEngine
                from .store import VectorCache

                self._engine = ServerEngine(self.settings)
                self._engine.vector_cache = VectorCache()  # a long-lived process: passage vectors as one matrix
            return self._engine

    # -- plumbing ---------------------------------------------------------------------------
    async def call(self, tool: str, fn: Callable[[], dict[str, Any]]) -> Any:
        """Run ``fn`` in a worker thread; map its answer or exception to a tool result."""
        import anyio
        from mcp_types import CallToolResult, TextContent

        started = time.monotonic()
        try:
            data = await anyio.to_thread.run_sync(fn)
            is_error = False
        except Exception as exc:  # noqa: BLE001 - every failure becomes one tool error result
            data = error_payload(tool, exc)
            is_error = True
        log.debug("%s answered in %.3f s%s", tool, time.monotonic() - started, " (error)" if is_error else "")
        return CallToolResult(content=[TextContent(type="text", text=dumps(data))], is_error=is_error)

    def request_stop(self) -> None:
        """Ask running index runs (catch-up or index_directory) to stop at the next file."""
        self._stop.set()
        if self._engine is not None:
            self._engine.stopping.set()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Ask background work to stop; True when it finished within ``timeout`` seconds
        (model loading cannot be interrupted and is not waited for)."""
        self.request_stop()
        if self._auto is not None and not self._auto.shutdown(timeout):
            return False
        thread = self._catch_up
        if thread is not None and thread.is_alive():
            thread.join(timeout)
            if thread.is_alive():
                return False
        engine = self._engine
        if engine is not None and engine.model_loading:
            return False
        return True

    def index_status(self) -> dict[str, Any]:
        """``Engine.status()`` trimmed to what an agent needs (see STATUS_FIELDS)."""
        engine = self.engine
        full = engine.status()
        status = {k: full[k] for k in STATUS_FIELDS if k in full}
        status["embedder"] = {k: full["embedder"].get(k) for k in ("name", "loaded", "error")}
        if status["embedder"].get("error"):  # the cause only; the status CLI has the full fix
            status["embedder"]["error"] = str(status["embedder"]["error"]).split(";")[0][:200]
        if engine.model_loading:
            status["embedder"]["loading"] = True
        if full.get("indexing"):
            status["progress"] = full.get("progress")
            if full.get("last_run") is None or status.get("message") is None:
                status["message"] = ("indexing in progress: results may be incomplete until it finishes; "
                                     "search again shortly")
        return status

    # -- background catch-up (issue 5 replaces this hook) ------------------------------------
    def _maybe_start_catch_up(self, kind: str = "search_docs") -> None:
        """Background catch-up (issue 5): the AutoIndexer starts a run on the first call, when
        indexed files changed (stat probe, >= 10 s gap) or for a walk every 5 minutes; it returns
        at once (or within ~2 s for a refresh of changed files)."""
        if not self.settings.auto_index:
            return
        with self._catch_up_lock:
            if self._auto is None:
                from .autoindex import AutoIndexer

                self._auto = AutoIndexer(self.engine, stop_event=self._stop)
        if self._auto.on_call(kind) == "first":
            self._catch_up = self._auto.thread  # search_docs waits briefly for its keyword index

    # -- tools ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Re-index files changed on disk since they were indexed before answering (stat probe
        of every indexed file and folder, throttled by ``Engine.refresh`` on huge trees: an edit
        of a hit's file made just after a probe is caught by ``_fresh_hits`` instead). Off with
        auto-index off: then hits from changed files are flagged ``stale``."""
        if not self.settings.auto_index:
            return
        try:
            self.engine.refresh()
        except RootMismatchError:  # the database is another root's: every tool answers that error
            raise
        except Exception:  # a refresh problem must not fail the answer; the next run retries
            log.warning("refreshing changed files failed", exc_info=True)

    def search_docs(self, query: str, top_k: int, path_prefix: str | None, max_tokens: int) -> dict[str, Any]:
        self._refresh()
        self._maybe_start_catch_up()
        engine = self.engine
        engine.start_model_warmup()
        if self._catch_up is not None and self._catch_up.is_alive():
            # a first-run index was just started: give it a moment to make the keyword index
            engine.parsed.wait(CATCH_UP_WAIT_SECONDS)

        def run() -> dict[str, Any]:
            try:
                found = engine.search(query, top_k=top_k, path_prefix=path_prefix, max_tokens=max_tokens)
            except Exception as exc:
                if type(exc).__name__ != "OperationalError":
                    raise
                raise QueryNotParsed(query, exc) from exc
            for hit in found["results"]:
                if hit.get("content") is not None:
                    hit.pop("preview", None)  # the content already holds it
            return found

        answer = self._fresh_hits(run)
        answer["index_status"] = self.index_status()
        return answer

    def _fresh_hits(self, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run the search (``run``) and make sure no hit from a file that differs on disk from
        what was indexed passes for current: with auto-index on, such files (found by one
        ``stat`` per hit file, not the throttled probe) are re-indexed and the search runs
        again; whatever still differs (auto-index off, a failed refresh, an edit meanwhile) is
        flagged ``hit["stale"]`` and the answer's ``message`` says how to refresh."""
        from .status import prepend_note

        engine = self.engine
        answer = run()
        changed = engine.changed_among(h["file_path"] for h in answer["results"])
        if changed and self.settings.auto_index:
            try:
                engine.refresh(sorted(changed))
            except Exception:  # flagged stale below; the background run retries
                log.warning("refreshing the files of search hits failed", exc_info=True)
            else:
                answer = run()
                changed = engine.changed_among(h["file_path"] for h in answer["results"])
        stale = engine.mark_stale(answer["results"], changed)
        if stale:
            flagged = sum(1 for h in answer["results"] if "stale" in h)
            how = ("they are re-indexed automatically; search again shortly" if self.settings.auto_index else
                   "call index_directory to refresh the index (read_section reads a file's current text)")
            note = (f"{flagged} hit(s) marked stale: their file changed on disk since it was indexed, so their "
                    f"text and lines may be outdated; {how}")
            answer["message"] = prepend_note(note, answer.get("message"))
        return answer

    def _await_first_index(self, kind: str) -> None:
        """On a never-indexed root, start the catch-up and give it a moment (like a search)."""
        self._maybe_start_catch_up(kind)
        if self._catch_up is not None and self._catch_up.is_alive():
            self.engine.parsed.wait(CATCH_UP_WAIT_SECONDS)

    def read_section(self, file_path: str, heading_path: str, include_subsections: bool,
                     cursor: int | None) -> dict[str, Any]:
        self._refresh()
        self._await_first_index("read_section")
        return self.engine.read(file_path, heading_path, include_subsections=include_subsections,
                                cursor=cursor or 0)

    def outline(self, file_path: str, max_depth: int | None) -> dict[str, Any]:
        self._refresh()
        self._await_first_index("get_document_outline")
        return self.engine.outline(file_path, max_depth)

    def list_documents(self, directory: str | None, offset: int) -> dict[str, Any]:
        self._refresh()
        if not directory:
            self._maybe_start_catch_up("list_documents")
        answer = self.engine.list_documents(directory, offset=offset, limit=200)
        answer["index_status"] = self.index_status()
        return answer

    def index_directory(self, directory: str | None, force: bool) -> dict[str, Any]:
        engine = self.engine
        rel = engine.subpath(directory)  # a bad folder is an error even while a run is going
        if rel is not None and not (engine.root / rel).is_dir():
            raise QueryError(f"{directory!r} is not a directory inside the docs root {str(engine.root)!r}")
        if engine.indexing:
            return self._busy("an index run is already in progress in this server")
        try:
            report = engine.index(directory, force=force, wait_seconds=0.5, should_stop=self._stop.is_set)
        except IndexBusyError as exc:
            return self._busy(str(exc))
        data = report.to_dict()
        data["failed"] = data.get("failed", [])[:50]
        data["warnings"] = data.get("warnings", [])[:50]
        data["index_status"] = self.index_status()
        return data

    def _busy(self, why: str) -> dict[str, Any]:
        return {
            "in_progress": True,
            "message": f"{why}; it updates the index as it goes, so search now or call index_directory again later",
            "index_status": self.index_status(),
        }


class QueryNotParsed(MarkdownMemoryError):
    """The keyword index rejected the query (an FTS5 syntax problem the query analyser missed)."""

    def __init__(self, query: str, exc: Exception) -> None:
        super().__init__(
            f"the query could not be parsed by the keyword index ({exc}); rephrase it with plain words "
            "and without quotes or operators"
        )
        self.query = query


def error_payload(tool: str, exc: BaseException) -> dict[str, Any]:
    """The JSON body of an error result: ``{"error": one sentence, "candidates"?: [...]}``.

    Expected errors (MarkdownMemoryError) keep their message; anything else is logged with its
    traceback on stderr and reported as an internal error without one.
    """
    if type(exc).__name__ == "OperationalError" and tool == "search_docs":
        exc = QueryNotParsed("", exc)
    if isinstance(exc, MarkdownMemoryError):
        log.info("%s: %s", tool, exc)
        payload: dict[str, Any] = {"error": str(exc)}
        candidates = getattr(exc, "candidates", None)
        if candidates:
            payload["candidates"] = list(candidates)[:20]
            if getattr(exc, "ambiguous", False):
                payload["ambiguous"] = True
        return payload
    log.error("%s failed", tool, exc_info=exc)
    return {"error": f"internal error in {tool} ({type(exc).__name__}: {exc}); the server's stderr log has "
                     "details — retry, or report it if it persists"}
