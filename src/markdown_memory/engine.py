"""The engine: one object per docs root with the public API the CLI and MCP server share.

``Engine(settings)`` -> ``index()``, ``search()``, ``outline()``, ``read()``,
``list_documents()``, ``status()``. Nothing heavy happens in the constructor: the database
opens on first use and the embedding model loads on the first call that needs a vector.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import filelock

from .config import Settings
from .embed.base import Embedder
from .errors import (
    DocsRootMissingError,
    DocumentNotFoundError,
    EmbedderUnavailableError,
    IndexBusyError,
    QueryError,
)
from .freshness import remember_folders, stale_paths
from .indexer import IndexReport, Progress, index_tree, refresh_paths
from .reading import document_entries, empty_folder_note, outline_nodes, page, pick_sections, verbatim_lines
from .resolve import normalise_request_path, resolve_document
from .search import analyse, pack_hits, search_sections
from .status import REFRESH_TTL_SECONDS, StatusMixin, prepend_note
from .store import (
    BUSY_TIMEOUT_MS, DocumentHeader, Store, VectorCache, is_corruption, move_aside, readonly_as_user_error,
    readonly_error,
)
from .tokens import count_tokens
from .walk import stat_signature

log = logging.getLogger("markdown_memory.engine")

MAX_QUERY_CHARS = 10_000
READ_PAGE_TOKENS = 8_000


#: refresh(): a new stat probe starts once this many times the last probe's cost has passed.
PROBE_COST_FACTOR = 4.0


class Engine(StatusMixin):
    """Index and query one docs root (see module docstring). Thread-safe for reads through
    per-thread database connections; index runs take a cross-process writer lock."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root: Path = settings.docs_root
        self._local = threading.local()
        self._embedder: Embedder | None = None
        self._embedder_error: str | None = None
        self._embedder_lock = threading.Lock()
        self.indexing = False
        self.progress: dict[str, int] = {}
        self.last_report: IndexReport | None = None
        #: set by AutoIndexer: changed files are refreshed in the background (status wording)
        self.auto_refresh = False
        #: where a damaged database was moved (this process), for the status message
        self.moved_aside: str | None = None
        self._generation = 0  # bumped when the database file is replaced: threads reopen
        self._refreshed_at = float("-inf")
        self._probe_seconds = 0.0  # how long the last stat probe took (refresh)
        self._index_generation = 0  # bumped by every index run or refresh in this process
        self._status_cache: tuple[Any, float, Any] | None = None
        #: set when a refresh wrote text that has no vectors yet (the AutoIndexer runs for it)
        self.vectors_due = False
        #: passage vectors kept in memory for searches (the server sets one; None: vec0 scans)
        self.vector_cache: VectorCache | None = None

    # -- resources ------------------------------------------------------------------------
    def require_root(self) -> None:
        """Raise DocsRootMissingError when the docs root is not an existing directory any more
        (moved, renamed or deleted while this process runs). Every entry point checks this
        (one ``stat``) before it opens the database, creates a folder or lock file, or changes
        the index: a walk of a missing root would remove every document, and a database path
        inside the old root would be recreated there as a stray folder."""
        if not os.path.isdir(self.root):
            raise DocsRootMissingError(
                f"the docs root {str(self.root)!r} no longer exists (moved, renamed or deleted?); the index "
                f"{str(self.settings.db_path)!r} is kept unchanged: restore the folder, or restart markdown-memory "
                "with --docs-dir / MARKDOWN_MEMORY_DOCS_DIR (and --db / MARKDOWN_MEMORY_DB, if set) pointing at "
                "its new location"
            )

    @property
    def store(self) -> Store:
        """This thread's connection (opened, and the schema created, on first use). A database
        that cannot be opened because it is damaged is moved aside and rebuilt (see
        ``_recover``); lock contention (SQLITE_BUSY) is never treated as damage. Raises
        DocsRootMissingError (see ``require_root``), DatabaseReadOnlyError when the database
        cannot be opened because it or its folder is not writable, RootMismatchError and
        SchemaError."""
        self.require_root()
        store = getattr(self._local, "store", None)
        if store is not None and getattr(self._local, "generation", 0) != self._generation:
            store.close()
            store = None
        if store is None:
            store = self._open_store()
            self._local.store = store
            self._local.generation = self._generation
        return store

    def _open_store(self) -> Store:
        try:
            return Store(self.settings.db_path, root=self.root)
        except Exception as exc:
            if not is_corruption(exc):
                raise
            reason = str(exc)
        with self.writer_lock().acquire(timeout=BUSY_TIMEOUT_MS / 1000):
            try:  # another process may have rebuilt it while we waited for the lock
                return Store(self.settings.db_path, root=self.root)
            except Exception as exc:
                if not is_corruption(exc):
                    raise
                return self._recover(str(exc) or reason)

    def _recover(self, reason: str) -> Store:
        """Move the damaged database aside and start an empty one that records where the old
        one went. Caller holds the writer lock."""
        target = move_aside(self.settings.db_path)
        self.moved_aside = str(target)
        self._generation += 1
        store = Store(self.settings.db_path, root=self.root)
        with store.transaction():
            store.set_meta("moved_aside", str(target))
            store.set_meta("moved_aside_reason", reason[:300])
        return store

    def close(self) -> None:
        store = getattr(self._local, "store", None)
        if store is not None:
            store.close()
            self._local.store = None

    def embedder(self) -> Embedder | None:
        """The loaded embedder, or None (keyword-only: by choice, or because it cannot load;
        ``embedder_error`` then says why and how to fix it). Loads at most once."""
        if self.settings.embedder == "none":
            return None
        with self._embedder_lock:
            if self._embedder is None and self._embedder_error is None:
                from .embed import get_embedder

                try:
                    self._embedder = get_embedder(self.settings.embedder, self.settings.threads)
                except EmbedderUnavailableError as exc:
                    self._embedder_error = str(exc)
                    # the cause on stderr; the full fix is in `status` and `--download-model`
                    log.warning("keyword-only search: %s", str(exc).split(";")[0][:300])
                    log.info("%s", exc)
                except Exception as exc:  # onnxruntime/tokenizers failures on verified files
                    self._embedder_error = f"the {self.settings.embedder} model failed to load: {exc}"
                    log.warning("keyword-only search: %s", self._embedder_error)
        return self._embedder

    @property
    def embedder_error(self) -> str | None:
        return self._embedder_error

    def writer_lock(self) -> filelock.FileLock:
        """Cross-process writer lock next to the database (released by the OS if we die).
        Raises DocsRootMissingError (see ``require_root``) before creating the database's
        folder, and DatabaseReadOnlyError when that folder cannot be created."""
        self.require_root()
        path = Path(str(self.settings.db_path) + ".lock")
        with readonly_as_user_error(self.settings.db_path, OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
        return filelock.FileLock(str(path))

    def _acquire(self, lock: filelock.FileLock, timeout: float) -> None:
        """``lock.acquire(timeout)``; a lock file that cannot be created or opened for writing
        (read-only folder or file) raises DatabaseReadOnlyError instead of an OSError."""
        with readonly_as_user_error(self.settings.db_path, OSError):
            lock.acquire(timeout=timeout)

    # -- index ----------------------------------------------------------------------------
    def index(
        self,
        directory: str | None = None,
        *,
        force: bool = False,
        wait_seconds: float = 60.0,
        progress: Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> IndexReport:
        """Incrementally index the root (or ``directory`` inside it). Raises IndexBusyError
        when another process holds the writer lock longer than ``wait_seconds``,
        DocsRootMissingError when the root no longer exists (nothing is created or changed),
        DatabaseReadOnlyError when the database or its folder cannot be written."""
        self.require_root()
        target = None
        rel = self.subpath(directory)
        if rel is not None:
            target = (self.root / rel).resolve()
            if not target.is_dir():
                raise QueryError(f"{directory!r} is not a directory inside the docs root {str(self.root)!r}")
        lock = self.writer_lock()
        try:
            try:
                self._acquire(lock, 0)
            except filelock.Timeout:
                if wait_seconds <= 0:
                    raise
                log.warning("another process is indexing %s; waiting up to %g s for it to finish",
                            self.root, round(wait_seconds, 1))
                self._acquire(lock, wait_seconds)
        except filelock.Timeout as exc:
            raise IndexBusyError(
                f"another index run is in progress for {str(self.root)!r}; try again when it finishes"
            ) from exc
        self.indexing = True
        self.vectors_due = False  # this run embeds whatever a refresh left without vectors

        def track(phase: str, done: int, total: int) -> None:
            self.progress = {"phase": phase, "done": done, "total": total}  # type: ignore[dict-item]
            if progress:
                progress(phase, done, total)

        try:
            with readonly_as_user_error(self.settings.db_path):
                report = self._run_index(target, force, track, should_stop)
        finally:
            self.indexing = False
            self.progress = {}
            lock.release()
        self._index_generation += 1
        if report.keyword_only:
            report.message = self._keyword_only_message()
        self.last_report = report
        return report

    def _run_index(self, target: Path | None, force: bool, track: Progress,
                   should_stop: Callable[[], bool] | None) -> IndexReport:
        """The body of ``index`` (caller holds the writer lock): open the writer, leave the run
        marker while ``index_tree`` runs, clear a recorded move-aside after a full run."""
        writer = self._open_writer()
        marker = self.run_marker()
        try:
            marker.write_text(str(os.getpid()))  # stays if this process dies mid-run
            report = index_tree(
                writer,
                self.root,
                embedder=None if self.settings.embedder == "none" else self._embedder_for_index,
                weights_id=self._expected_weights_id(),
                exclude=self.settings.exclude,
                directory=target,
                force=force,
                progress=track,
                should_stop=should_stop,
            )
            if not report.interrupted and not target and writer.get_meta("moved_aside"):
                writer.clear_moved_aside()
                self.moved_aside = None
            marker.unlink(missing_ok=True)  # only a run that returned: a crash leaves it behind
        finally:
            writer.close()
        return report

    def run_marker(self) -> Path:
        """A file that exists while an index run is under way (and after one was killed): a
        file, not a database row, so a run that changes nothing writes nothing to the index."""
        return Path(str(self.settings.db_path) + ".run")

    def _open_writer(self) -> Store:
        """The index run's own connection (caller holds the writer lock). After a run that did
        not finish (the process was killed: its ``run_marker`` file is still there) the database
        is checked first (``integrity_problem``) and moved aside and rebuilt when damaged.
        Raises DatabaseReadOnlyError when the database file cannot be written."""
        self._check_writable()
        try:
            writer = Store(self.settings.db_path, root=self.root)
        except Exception as exc:
            if not is_corruption(exc):
                raise
            return self._recover(str(exc))
        try:
            problem = writer.integrity_problem() if self.run_marker().exists() else None
        except Exception as exc:
            if not is_corruption(exc):
                writer.close()
                raise
            problem = str(exc)
        if problem is None:
            return writer
        writer.close()
        log.warning("integrity check failed after an interrupted run: %s", problem)
        return self._recover(problem)

    def _check_writable(self) -> None:
        """Raise DatabaseReadOnlyError when the database file exists but cannot be written
        (read-only file or filesystem): found before a run starts writing, so no document fails
        half-way and no run marker is left behind. One ``access`` call."""
        path = self.settings.db_path
        if path.exists() and not os.access(path, os.W_OK):
            raise readonly_error(path, PermissionError(errno.EACCES, "the file is read-only", str(path)))

    def _embedder_for_index(self) -> Embedder | None:
        return self.embedder()

    def _expected_weights_id(self) -> str | None:
        """``weights_id`` of the loaded embedder, else what the preset would load when that is
        known without loading it (None: unknown, or keyword-only)."""
        if self._embedder is not None:
            return self._embedder.weights_id
        if self.settings.embedder == "none":
            return None
        from .embed.base import expected_weights_id

        return expected_weights_id(self.settings.embedder)

    def refresh(self, paths: list[str] | None = None, *, ttl: float = REFRESH_TTL_SECONDS) -> IndexReport | None:
        """Re-index, now, the files that changed since they were indexed (edited, deleted,
        unreadable, or new in a folder the last walk knew), or exactly ``paths``.

        Keyword index only (milliseconds per file): new text gets vectors in the next index
        run, unchanged passages keep theirs. The stat probe of every indexed file and folder
        (~7 ms for 700 files here) runs again once ``PROBE_COST_FACTOR`` times its last cost
        has passed (at most ``ttl`` seconds later): a small or medium tree is probed on
        practically every call, so an edit followed at once by a search is seen, while probing
        never takes more than about 1/``PROBE_COST_FACTOR`` of the time on a huge tree. Explicit
        ``paths`` are always refreshed and do not count as a probe. Returns the report, or None
        when nothing was stale. Safe beside a running index run (each document is replaced in
        one transaction). Raises DocsRootMissingError when the root no longer exists (nothing
        is changed) and DatabaseReadOnlyError when the database cannot be written.
        """
        self.require_root()
        probe = paths is None
        if probe:
            now = time.monotonic()
            gap = min(ttl, PROBE_COST_FACTOR * self._probe_seconds)
            if now - self._refreshed_at < gap:
                return None
            paths = stale_paths(self.store, self.root, self.settings.exclude)
            self._probe_seconds = time.monotonic() - now
            self._refreshed_at = now
        if not paths:
            return None
        self._check_writable()
        writer = Store(self.settings.db_path, root=self.root)
        try:
            with readonly_as_user_error(self.settings.db_path):
                report = refresh_paths(writer, self.root, paths, self.settings.exclude)
                with writer.transaction():
                    remember_folders(writer, self.root, paths)
        finally:
            writer.close()
        if probe:
            self._refreshed_at = time.monotonic()
        self._index_generation += 1
        if report.added or report.updated:
            self.vectors_due = True  # new text waits for the next index run to get vectors
        log.info("refreshed %d file(s): %d added, %d updated, %d removed", len(paths), report.added,
                 report.updated, report.removed)
        return report

    def _keyword_only_message(self) -> str | None:
        if self.settings.embedder == "none":
            return "keyword-only by choice (--embedder none); vectors are not computed"
        if not self.store.vec_available:
            return (
                "keyword-only: sqlite-vec cannot be loaded by this Python; install `sqlean.py` "
                "(pip install sqlean.py) to enable vector search"
            )
        if self._embedder_error:
            # Short on purpose: it rides on every answer; index_status.embedder.error has the detail.
            if "not installed" in self._embedder_error or "none of its files" in self._embedder_error:
                return (f"keyword-only: the {self.settings.embedder} model is not installed; run "
                        "`markdown-memory --download-model`, or use `--embedder minilm` (no download; for the MCP "
                        "server set MARKDOWN_MEMORY_EMBEDDER=minilm in its registration)")
            cause = self._embedder_error.split(";")[0][:200]
            return f"keyword-only: {cause} (`markdown-memory status` shows how to fix it)"
        return None

    # -- search ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        path_prefix: str | None = None,
        max_tokens: int = 2000,
    ) -> dict[str, Any]:
        """Hybrid search. Returns ``{"results": [hit...], "confidence": str, "keyword_only":
        bool, "message": str|None}``; each hit has file_path, heading_path, start_line,
        end_line, tokens, score, content (when it fits ``max_tokens``), preview, matched_by.
        With no confident match ``message`` says so, or, when the index holds no document (never
        indexed, first run under way), says that instead and how to index. Raises QueryError
        for an empty query."""
        if not query or not query.strip():
            raise QueryError("query is empty; pass words, a phrase or an identifier to search for")
        query = query[:MAX_QUERY_CHARS]
        top_k = max(1, min(int(top_k), 50))
        prefix = self.subpath(path_prefix)
        if prefix is not None and not self._has_documents_under(prefix):
            return {"results": [], "confidence": "none", "keyword_only": False,
                    "message": self.empty_index_message() or f"no indexed documents under {prefix!r}; list the "
                               "indexed paths with list_documents (CLI: markdown-memory list)"}
        analysed = analyse(query)
        store = self.store
        qvec = None
        embedder_name = None
        other_build: str | None = None
        wid, _dim = store.vector_space()
        if store.vec_available and store.has_vec_tables():
            emb = self.embedder()
            if emb is not None and emb.weights_id == wid:
                qvec = emb.embed_query(query)
                embedder_name = emb.name
            elif emb is not None and wid is not None:
                other_build = wid
                self.vectors_due = True  # the server's next index run re-embeds with this model
        outcome = search_sections(
            store, analysed, qvec, embedder_name=embedder_name, top_k=top_k, path_prefix=prefix,
            vector_cache=self.vector_cache,
        )
        results = pack_hits(outcome.hits, top_k=top_k, max_tokens=max_tokens)
        keyword_only = qvec is None
        message = None
        if keyword_only:
            message = self._keyword_only_message()
            if message is None and other_build is not None:
                message = self._other_vectors_message(other_build)
            if message is None and self.settings.embedder != "none":
                message = "keyword-only: vectors are still being computed for this index"
        if outcome.confidence == "none":
            note = self.empty_index_message() or "no confident match: nothing in the docs clearly answers this query"
            if outcome.absent and note.startswith("no confident match"):
                note += "; no document mentions " + ", ".join(f"'{a}'" for a in outcome.absent[:3])
            message = prepend_note(note, message)
        return {
            "results": results,
            "confidence": outcome.confidence,
            "keyword_only": keyword_only,
            "message": message,
        }

    def subpath(self, raw: str | None) -> str | None:
        """A folder or path prefix inside the root as a POSIX relative path; None for the root
        itself. Raises PathOutsideRootError for ``../`` and absolute paths elsewhere."""
        if raw is None or not raw.strip():
            return None
        try:
            rel = normalise_request_path(raw, self.root).rstrip("/")
        except DocumentNotFoundError:  # the root itself ("." or its absolute path)
            return None
        return rel or None

    def _has_documents_under(self, prefix: str) -> bool:
        return self.store.has_documents_under(prefix)

    def _indexed_paths(self) -> list[str]:
        return self.store.indexed_paths()

    def _document_row(self, file_path: str) -> DocumentHeader:
        """The stored row of a requested document, re-indexed first when the file changed on
        disk (or is on disk but not yet indexed), so reads never serve old text."""
        try:
            rel = resolve_document(file_path, self.root, self._indexed_paths())
        except DocumentNotFoundError:
            rel = normalise_request_path(file_path, self.root)
            self.refresh([rel])
            try:
                rel = resolve_document(file_path, self.root, self._indexed_paths())
            except DocumentNotFoundError as exc:
                reason = self.store.failure_reason(rel)
                if reason is not None:
                    raise DocumentNotFoundError(f"{rel!r} is not indexed: {reason}") from exc
                raise
        else:
            stored = self.store.document_signature(rel)
            try:
                st = os.stat(self.root / rel)
                current = stat_signature(st) if os.access(self.root / rel, os.R_OK) else None
            except OSError:
                current = None
            if stored is None or current != tuple(stored):
                self.refresh([rel])
        header = self.store.document_header(rel)
        if header is None:
            reason = self.store.failure_reason(rel)
            why = reason if reason is not None else "it was deleted or moved since it was indexed"
            raise DocumentNotFoundError(f"{rel!r} is no longer indexed: {why}")
        return header

    def outline(self, file_path: str, max_depth: int | None = None) -> dict[str, Any]:
        """Heading tree of one document: title, front-matter keys, preamble (lines) and
        ``headings`` [{heading_path, title, level, start_line, end_line, end_line_with_children,
        tokens, tokens_with_children, parts?}]; no bodies. ``end_line`` and ``tokens`` are the
        heading's own text (what ``read`` returns), the ``_with_children`` fields include its
        subsections (see ``reading.outline_nodes``). Raises DocumentNotFoundError /
        PathOutsideRootError."""
        header = self._document_row(file_path)
        rel, title = header.path, header.title
        preamble, nodes = outline_nodes(self.store.sections_of(header.id))
        if max_depth is not None:  # depth in the tree (1 = top headings), whatever their # level
            nodes = [n for n in nodes if n["heading_path"].count(" > ") + 1 <= max_depth]
        return {
            "file_path": rel,
            "title": title,
            "front_matter_keys": sorted(header.metadata),
            "preamble": preamble,
            "headings": nodes,
        }

    def read(
        self,
        file_path: str,
        heading_path: str,
        *,
        include_subsections: bool = False,
        cursor: int = 0,
        page_tokens: int = READ_PAGE_TOKENS,
    ) -> dict[str, Any]:
        """The verbatim text of one section (all ``(Part n)`` pieces joined for a base path;
        with ``include_subsections`` its descendants too). Long answers are paged by
        ``page_tokens``: ``next_cursor`` (a line index into the text, 0 = its first line) is set
        when more lines remain; pass it as ``cursor`` for the next page. Raises
        DocumentNotFoundError, SectionNotFoundError (with candidates), PathOutsideRootError, and
        QueryError for a cursor outside the text (negative, or not below its line count: the
        message gives the valid range) instead of answering an empty page."""
        header = self._document_row(file_path)
        rel = header.path
        wanted, picked = pick_sections(self.store.sections_of(header.id), heading_path, rel, include_subsections)
        lines = verbatim_lines(picked)
        start_line = picked[0].start_line
        cursor = int(cursor)
        out_lines, index = page(lines, cursor, page_tokens, f"section {wanted!r} of {rel}"
                                + (" with its subsections" if include_subsections else ""))
        content = "\n".join(out_lines)
        return {
            "file_path": rel,
            "heading_path": wanted,
            "start_line": start_line + cursor,
            "end_line": start_line + index - 1,
            "section_end_line": picked[-1].end_line,
            "tokens": count_tokens(content),
            "content": content,
            "next_cursor": index if index < len(lines) else None,
        }

    def list_documents(self, directory: str | None = None, *, offset: int = 0, limit: int = 200) -> dict[str, Any]:
        """Indexed documents (optionally under ``directory``): path, title, sections, tokens,
        modified (ISO 8601 UTC); paged by ``offset``/``limit`` (max 200). ``message`` says why a
        folder lists nothing (not under the root, a file, nothing indexed there), else None."""
        limit = max(1, min(int(limit), 200))
        rel = self.subpath(directory)
        total = self.store.count_documents(rel)
        docs = document_entries(self.store.document_list(rel, limit, max(0, int(offset))))
        nxt = offset + len(docs)
        message = empty_folder_note(self.root, rel, str(directory), self._index_hint()) if rel and not total else None
        return {"documents": docs, "total": total, "next_offset": nxt if nxt < total else None, "message": message}
