"""The engine: one façade per docs root, shared by the CLI and the MCP server.

``Engine(settings)`` -> ``index()``, ``search()``, ``outline()``, ``read()``, ``links()``,
``drift()``, ``list_documents()``, ``status()``, each returning a typed model (:mod:`.models`). Nothing heavy
happens in the constructor: the database opens on first use and the embedding model loads on
the first call that needs a vector. ``background=True`` (the MCP server) loads the model in a
thread, keeps passage vectors in memory, and, with ``settings.auto_index``, keeps the index
current with a catch-up scheduler. How an answer treats files changed on disk is one policy,
chosen per call (:class:`~markdown_memory.models.Freshness`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import messages
from .answer_notes import SearchFacts, annotate
from .config import MAX_QUERY_CHARS, Settings
from .drift import DriftReport, find_drift
from .embed.base import Embedder
from .embed.choice import resolve as resolve_embedder
from .embed.loader import ModelLoader
from .errors import DocumentNotFoundError, IndexBusyError, QueryError
from .files.walk import linked_part
from .freshness import FreshnessGate
from .index.activity import IndexActivity
from .index.changes import ChangeApplier, ChangeOutcome, ChangeSet, StopCheck
from .index.embedding import Progress
from .index.runs import IndexRuns
from .index.scheduler import BackgroundIndexer, IndexHooks
from .markdown.vault import vault_meta
from .models import (
    LIST_PAGE_SIZE,
    DocumentEntry,
    DocumentList,
    Freshness,
    Hit,
    IndexReport,
    IndexStatus,
    Links,
    Outline,
    SearchAnswer,
    SearchRequest,
    SectionText,
)
from .models.notes import NoDocumentsUnder, NoFilterMatch, Note, Said
from .ranked import Ranked, rank_once
from .reader import Reader
from .reading.documents import current_document
from .reading.links import LINKS_PAGE, is_wikilink, link_address, links_answer
from .reading.map import DEFAULT_MAP_TOKENS, DocsMap, build_map
from .reading.resolve import disk_spelling, normalise_request_path, resolved_as_asked
from .reading.sections import outline_nodes, page, pick_sections, verbatim_lines
from .search import fit_answer
from .search.filters import clean_tags, make_scope
from .status import REFRESH_TTL_SECONDS, StatusReporter
from .store.database import Database
from .store.scope import Scope
from .text import count_tokens

if TYPE_CHECKING:  # pragma: no cover
    from .store import Store

#: a larger list offset is past the end of any index (and past SQLite's 64-bit integers)
MAX_OFFSET = 2**62
READ_PAGE_TOKENS = 8_000


class Engine:
    """Index and query one docs root (see module docstring). Thread-safe for reads through
    per-thread database connections; index runs take a cross-process writer lock.

    ``embedder``: a loaded model to use instead of loading the configured preset (tests share
    one); without it a preset ``settings`` does not name is chosen by ``embed/choice.py``.
    ``background``: server mode (see module docstring). ``clock``: the monotonic clock of the
    scheduler and the refresh throttle. ``vectors_in_memory``: KNN over in-memory quantized
    vectors (``store.VectorCache``), not sqlite-vec (default: in server mode). The collaborators
    (database, model loader, scheduler, ...) are private: adapters use the methods below.
    """

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None, background: bool = False,
                 clock: Callable[[], float] = time.monotonic, vectors_in_memory: bool | None = None) -> None:
        from .store import VectorCache

        # a preset nobody named is chosen here, from the database (embed/choice.py): the one place
        settings, chosen = resolve_embedder(settings) if embedder is None else (settings, None)
        self.settings = settings  # with the embedder preset chosen
        self.root: Path = settings.docs_root
        self._database = Database(settings.docs_root, settings.db_path, create_on_read=background)
        self._loader = ModelLoader(settings.embedder, settings.threads, embedder=embedder, background=background)
        self._activity = IndexActivity()
        self._background = background
        self._context = messages.Context(self.root, settings.embedder, background and settings.auto_index,
                                        agent=background, chosen=chosen, by_env=settings.embedder_by_env)
        self._reporter = StatusReporter(self._database, self._loader, self._activity, self._context)
        self._vector_cache = VectorCache() if (background if vectors_in_memory is None else vectors_in_memory) else None
        self._scheduler = BackgroundIndexer(self._index_hooks(), enabled=background and settings.auto_index, clock=clock)
        self._runs = IndexRuns(settings, self._database, self._loader, self._activity, clock=clock)
        self._gate = FreshnessGate(lambda progress, wait: self.index(progress=progress, wait_seconds=wait),
                                   self.refresh, self._scheduler, self._activity, self._reporter)
        self._changes = ChangeApplier(self._database, self._runs, self._activity, self.start_index_run, self.index)
        self._database.on_recover = self._rebuild_after_damage

    def _index_hooks(self) -> IndexHooks:
        """What the background scheduler calls (``index/scheduler.py``)."""
        return IndexHooks(index=lambda wait, stop: self.index(wait_seconds=wait, should_stop=stop),
                          changed_files=lambda: {c.path: c.change for c in self._reporter.changed_files(limit=None)},
                          close=self.close, activity=self._activity, root=self.root)

    # -- resources ------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        """This thread's database connection (see ``Database.connection``)."""
        return self._database.connection()

    def close(self) -> None:
        """Close this thread's database connection."""
        self._database.close()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stop background work; True when none is left running after ``timeout`` seconds (a
        model still loading cannot be interrupted)."""
        return self._scheduler.shutdown(timeout) and not self._loader.loading

    @property
    def stopping(self) -> bool:
        """True once :meth:`request_stop` was called (pass it as an index run's ``should_stop``)."""
        return self._scheduler.stopping

    def request_stop(self) -> None:
        """Ask running index runs to stop at the next file (the next run resumes)."""
        self._scheduler.request_stop()

    def recover_damaged(self, exc: BaseException) -> bool:
        """True when ``exc`` (from any call) said the database file is damaged and it was moved
        aside now (``Database.recover_damaged``; the rebuild starts in the background when
        auto-index is on): the caller may retry the call once, on the empty database whose
        answers say it is being rebuilt. False for any other error."""
        return self._database.recover_damaged(exc) is not None

    def check_pages(self) -> str | None:
        """``Database.check_pages`` (``PRAGMA quick_check``): where a damaged file was moved (its
        rebuild started), or None when it is sound. Raises what opening the database raises."""
        return self._database.check_pages()

    def _rebuild_after_damage(self) -> None:
        """After the damaged file went aside: forget its vectors, start the catch-up run."""
        if self._vector_cache is not None:
            self._vector_cache.clear()
        self._scheduler.start_rebuild()

    def start_catch_up(self) -> bool:
        """Start the background catch-up run now, without waiting for a call (the MCP server
        does once its handshake is done, so a new docs root is indexed before the first tool
        call). Returns at once; True when a run started (False: auto-index off, or a run is
        already going)."""
        return self._scheduler.on_call("handshake") is not None

    def start_index_run(self, reason: str = "watch") -> bool:
        """Start a background index run of the whole root now, whatever the gap since the last
        (the file watcher: after many changed files, and for the vectors of refreshed ones);
        returns at once. False when auto-index is off, the engine is stopping, or a run is going."""
        return self._scheduler.start_now(reason)

    def apply_changes(self, changes: ChangeSet, *, limit: int, why: str, stop: StopCheck = None) -> ChangeOutcome:
        """The file watcher's one call (``index/changes.py``; ``why`` for the log). Raises as :meth:`refresh`."""
        return self._changes.apply(changes, limit=limit, why=why, should_stop=stop)

    def load_model(self) -> Embedder | None:
        """Load the embedding model now, in this thread (None for the ``none`` preset)."""
        return self._loader.load()

    def indexed_paths(self) -> list[str]:
        """Every indexed document's path, relative to the docs root."""
        return self.store.indexed_paths()

    def failure_reason(self, rel: str) -> str | None:
        """Why the file ``rel`` could not be indexed, as the last run recorded it (None: no failure)."""
        return self.store.failure_reason(rel)

    @property
    def indexing(self) -> bool:
        """True while an index run of this process is under way or about to start."""
        return self._activity.indexing

    def subpath(self, raw: str | None) -> str | None:
        """A folder or path prefix inside the root as a POSIX relative path, spelled as on disk
        (``disk_spelling``); None for the root itself. Raises PathOutsideRootError for ``../``
        and absolute paths elsewhere."""
        if raw is None or not raw.strip():
            return None
        try:
            rel = disk_spelling(self.root, normalise_request_path(raw, self.root).rstrip("/"))
        except DocumentNotFoundError:  # the root itself ("." or its absolute path)
            return None
        return rel or None

    # -- index ----------------------------------------------------------------------------
    def index(self, directory: str | None = None, *, force: bool = False, wait_seconds: float = 60.0,
              progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
              if_idle: bool = False) -> IndexReport:
        """Incrementally index the root (or ``directory`` inside it). Raises QueryError for a
        ``directory`` that is not a folder inside the root; IndexBusyError when another process
        holds the writer lock longer than ``wait_seconds`` (or, with ``if_idle``, when this
        process is already indexing); DocsRootMissingError when the root no longer exists
        (nothing is created or changed); DatabaseReadOnlyError when the database or its folder
        cannot be written."""
        self._database.require_root()
        target = None
        rel = self.subpath(directory)
        if rel is not None:
            target, link = self.root / rel, linked_part(self.root, rel)  # links are never followed
            if link is not None or not target.is_dir():
                raise QueryError(messages.not_a_folder_to_index(str(directory), link, self.root))
        if if_idle and self._activity.indexing:
            raise IndexBusyError("an index run is already in progress in this server")
        try:
            report = self._runs.index(target, force=force, wait_seconds=wait_seconds, progress=progress,
                                     should_stop=should_stop)
        except Exception as exc:
            # the file was damaged under this run (the catch-up's or index_directory's): the one
            # recovery moves it aside, and this run, started again, is the rebuild
            if self._database.recover_damaged(exc) is None:
                raise
            report = self._runs.index(target, force=force, wait_seconds=wait_seconds, progress=progress,
                                     should_stop=should_stop)
        if report.keyword_only:
            report = report.with_message(self._reporter.keyword_only_cause())
        return report

    def refresh(self, paths: list[str] | None = None, *, ttl: float = REFRESH_TTL_SECONDS) -> IndexReport | None:
        """Re-index now, keyword index only, the files changed on disk since they were indexed
        (a throttled stat probe), or exactly ``paths``; None when nothing was stale. See
        ``IndexRuns.refresh``."""
        return self._runs.refresh(paths, ttl=ttl)

    # -- freshness policy (freshness.py) -----------------------------------------------------
    def _prepare(self, freshness: Freshness, kind: str, *, progress: Progress | None = None,
                 schedule: bool = True) -> bool:
        """``FreshnessGate.prepare``: bring the index as current as ``freshness`` asks."""
        return self._gate.prepare(freshness, kind, progress=progress, schedule=schedule)

    # -- search ---------------------------------------------------------------------------
    def search(self, request: SearchRequest, *, freshness: Freshness = Freshness.FLAG,
               progress: Progress | None = None, already_sent: Container[str] | None = None,
               reader: Reader | None = None) -> SearchAnswer:
        """Hybrid search (BM25 + vector lists fused by RRF, ``search/``) for ``request``
        (``request.SearchRequest``): at most ``top_k`` hits whose text fits ``max_tokens`` in rank
        order (later hits are pointers), restricted by its filters before ranking. ``notes``
        (``answer_notes``) say when nothing matched confidently, why search is keyword-only,
        which hits are stale, that another process is indexing, that the query was cut
        (``config.MAX_QUERY_CHARS``), or that the index or a filter matches nothing; ``message``
        words them for ``reader`` (default: this engine's: its process, agent in server mode).
        ``already_sent``: ``search.section_key``s this session already received (ignored when the
        request says ``resend``): those hits come as pointers marked ``already_sent``. Raises
        QueryError (bad filter value), PathOutsideRootError."""
        ctx = self._context if reader is None else self._context.for_reader(reader)
        already_sent = None if request.resend else already_sent
        prefix = self.subpath(request.path_prefix)
        scope = make_scope(request, prefix)
        indexed_here = self._prepare(freshness, "search_docs", progress=progress)
        self._loader.start()
        nothing = self._nothing_to_search(prefix, scope)
        if nothing is not None:
            status = self._reporter.status(ctx)  # nothing was searched: keyword_only says what a search would be
            empty = self._reporter.empty_index_message(ctx)
            notes: tuple[Note, ...] = (Said(empty),) if empty else (nothing,)
            return SearchAnswer((), "none", status.keyword_only, messages.render_notes(ctx, notes), status, notes)
        last: list[Ranked] = []

        def run() -> list[Hit]:
            last.append(self._search(ctx, request.query[:MAX_QUERY_CHARS], request.top_k, scope,
                                     request.max_tokens, already_sent))
            return last[-1].hits

        hits, flagged = self._gate.current(freshness, run)
        ranked, status = last[-1], self._reporter.status(ctx)
        notes = annotate(SearchFacts(len(request.query), MAX_QUERY_CHARS, flagged, ranked.keyword_only, status,
                                     indexed_here, self._background, self._database.disk_full), ranked.notes)
        answer = SearchAnswer(tuple(hits), ranked.confidence, ranked.keyword_only, messages.render_notes(ctx, notes),
                              status, notes, ranked.p_answer)
        # the agent view's measure, whichever adapter asks
        return fit_answer(answer, request.max_tokens, found=ranked.found)

    def _nothing_to_search(self, prefix: str | None, scope: Scope) -> Note | None:
        """Why the filters leave nothing to search (the path prefix holds no document, the other
        filters no section), or None."""
        if prefix is not None and not self.store.has_documents_under(prefix):
            return NoDocumentsUnder(prefix)
        if scope.narrows_sections and not self.store.has_scoped_sections(scope):
            return NoFilterMatch(tuple(self.store.empty_filters(scope)), tuple(scope.filters().items()),
                                 scope.tags_mode)
        return None

    def _search(self, ctx: messages.Context, query: str, top_k: int, scope: Scope, max_tokens: int,
                already_sent: Container[str] | None = None) -> Ranked:
        """One ranked, packed search over the index as it is (``ranked.rank_once``)."""
        return rank_once(self.store, self._loader, self._activity, self._reporter, ctx,
                         self._vector_cache, query, top_k, scope, max_tokens, already_sent)

    # -- documents ------------------------------------------------------------------------
    def _document(self, file_path: str) -> tuple[int, str, str, dict[str, object]]:
        """(id, path, title, front matter) of a requested document, re-indexed first when its
        file changed on disk (``reading.documents.current_document``)."""
        return current_document(lambda: self.store, self.root, file_path, self.refresh)

    def outline(self, file_path: str, max_depth: int | None = None, *,
                freshness: Freshness = Freshness.FLAG) -> Outline:
        """Heading tree of one document (no bodies); ``max_depth`` counts depth in the tree
        (1 = top headings), whatever their ``#`` level. Raises DocumentNotFoundError (with
        candidates) and PathOutsideRootError."""
        self._prepare(freshness, "get_document_outline")
        doc_id, rel, title, metadata = self._document(file_path)
        preamble, nodes = outline_nodes(self.store.sections_of(doc_id))
        if max_depth is not None:
            nodes = [n for n in nodes if n.heading_path.count(" > ") + 1 <= max_depth]
        vault = vault_meta(metadata, ())
        return Outline(rel, title, tuple(sorted(metadata)), preamble,
                       tuple(nodes), tuple(self.store.tags_of([doc_id]).get(doc_id, ())),
                       vault.aliases, vault.description, vault.date, vault.updated)

    def read(self, file_path: str, heading_path: str, *, include_subsections: bool = False, cursor: int = 0,
             page_tokens: int = READ_PAGE_TOKENS, freshness: Freshness = Freshness.FLAG) -> SectionText:
        """The verbatim text of one section (all ``(Part n)`` pieces joined; with
        ``include_subsections`` its descendants too), paged by ``page_tokens``: ``next_cursor``
        (a line index into the text; a line over 2,000 characters counts as one per 2,000, see
        ``sections.page_units``) is set when more lines remain. Raises
        DocumentNotFoundError, SectionNotFoundError (with candidates), PathOutsideRootError,
        and QueryError for a cursor outside the text (the message gives the valid range)."""
        self._prepare(freshness, "read_section")
        if not heading_path.strip() or is_wikilink(file_path):  # a link target: note#Heading, [[note#Heading]]
            try:
                file_path, heading_path = link_address(file_path, heading_path, self.store)
            except DocumentNotFoundError:
                if is_wikilink(file_path):
                    raise
        doc_id, rel, _title, _meta = self._document(file_path)
        rows = self.store.sections_of(doc_id)
        wanted, picked = pick_sections(rows, heading_path, rel, include_subsections)
        lines = verbatim_lines(picked)
        below = [] if include_subsections or any(line.strip() for line in lines[1:]) else [
            *dict.fromkeys(r.base_path for r in rows if r.base_path.startswith(wanted + " > "))]
        start_line = picked[0].start_line
        cursor = int(cursor)
        what = f"section {wanted!r} of {rel}" + (" with its subsections" if include_subsections else "")
        content, first, last, next_cursor = page(lines, cursor, page_tokens, what)
        fuzzy = bool(heading_path.strip()) and not resolved_as_asked(heading_path, wanted)
        note = messages.heading_resolved_from(heading_path, wanted, rel) if fuzzy else None
        if below:  # a title above its subsections: its text alone is one line
            note = messages.prepend_note(messages.heading_only(wanted, rel, below), note)
        return SectionText(rel, wanted, start_line + first, start_line + last, picked[-1].end_line,
                           count_tokens(content), content, next_cursor, heading_path if fuzzy else None, note)

    def links(self, file_path: str, *, offset: int = 0, limit: int = LINKS_PAGE,
              freshness: Freshness = Freshness.FLAG) -> Links:
        """Outgoing links and backlinks of one document (``reading/links.py``), ``limit`` of
        each from ``offset``. Raises DocumentNotFoundError and PathOutsideRootError."""
        self._prepare(freshness, "get_links")
        doc_id, rel, title, _meta = self._document(file_path)
        return links_answer(self.store, doc_id, rel, title, max(0, min(int(offset), MAX_OFFSET)), max(1, int(limit)))

    def drift(self, code_root: str | None = None, *, agent: bool = False) -> DriftReport:
        """Brings the index up to date, then the sections naming what the code side (``code_root``,
        default: the git work tree of the docs root) no longer holds (``drift/``, docs/drift.md).
        ``agent``: the caller is the MCP tool, so an unknown code side is explained to an agent."""
        self.index()
        return find_drift(self.store, self.root, code_root, agent=agent)

    def list_documents(self, directory: str | None = None, *, offset: int = 0, limit: int = LIST_PAGE_SIZE,
                       freshness: Freshness = Freshness.FLAG, tags: Sequence[str] | str | None = None) -> DocumentList:
        """Indexed documents (optionally under ``directory``, carrying one of ``tags`` or a tag
        nested in one) by path, paged by ``offset``/``limit`` (max 200), each with its tags.
        ``message`` says why a page lists nothing (not under the root, a file, nothing indexed
        there, no document with the tags, past the end) or that another run is indexing."""
        rel = self.subpath(directory)
        self._prepare(freshness, "list_documents", schedule=rel is None)
        limit = max(1, min(int(limit), LIST_PAGE_SIZE))
        offset = max(0, min(int(offset), MAX_OFFSET))  # SQLite integers are 64-bit
        store = self.store
        wanted = clean_tags(tags)
        total = store.count_documents(rel, wanted)
        docs = tuple(DocumentEntry.from_mtime(r.path, r.title, r.sections, r.tokens, r.mtime_ns, r.tags)
                     for r in store.document_list(rel, limit, offset, wanted))
        nxt = offset + len(docs)
        message = None
        if rel and not store.count_documents(rel):
            message = messages.empty_folder(self._context, rel, str(directory))
        elif wanted and not total and store.has_documents():
            message = messages.no_tagged_documents(self._context, wanted)
        elif total and not docs:
            message = messages.offset_past_end(offset, total)
        status = self.status()
        if status.indexing and not self._activity.indexing:  # status probed the writer lock already
            message = messages.prepend_note(messages.list_busy_elsewhere(), message)
        return DocumentList(docs, total, nxt if nxt < total else None, message, status)

    def docs_map(self, max_tokens: int = DEFAULT_MAP_TOKENS, *, freshness: Freshness = Freshness.FLAG) -> DocsMap:
        """The docs map (``reading.map``): every indexed document with its top headings and token
        counts, as llms.txt-style Markdown within ``max_tokens`` (coarser when it must be)."""
        self._prepare(freshness, "docs_map")
        return build_map(self.root.name, self.store.document_headings(), max_tokens,
                         empty_note=self._reporter.empty_index_message())

    def status(self) -> IndexStatus:
        """Index health (see ``models.IndexStatus``)."""
        return self._reporter.status()
