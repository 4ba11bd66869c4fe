"""Index health: counts, changed files, failures, coverage, and the one sentence an agent
should act on (``Engine.status``), built from the database, the model loader and the runs of
this process. Every collaborator is passed in.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from . import messages
from .embed.base import model_problem
from .embed.choice import no_download_instead, other_vectors
from .embed.loader import ModelLoader
from .files.freshness import changed_documents
from .files.walk import MARKDOWN_SUFFIXES
from .index.activity import IndexActivity
from .models import EmbedderState, FileChange, IndexCounts, IndexStatus, LastRun
from .reader import for_reader
from .store.database import Database

#: A stat probe of the indexed files (refresh, status) is reused for this long (seconds).
REFRESH_TTL_SECONDS = 0.5
#: status lists at most this many changed files and failures
STATUS_LIST_LIMIT = 20

#: (counts, first failures, first changed files, how many files changed)
_Facts = tuple[IndexCounts, list[dict[str, str]], list[FileChange], int]


class StatusReporter:
    """``status()`` and the probes it is made of, for one docs root."""

    def __init__(self, database: Database, loader: ModelLoader, activity: IndexActivity,
                 context: messages.Context) -> None:
        self.database = database
        self.loader = loader
        self.activity = activity
        self.context = context
        self._cache: tuple[tuple[int, bool], float, _Facts] | None = None

    # -- probes ---------------------------------------------------------------------------------
    def changed_files(self, limit: int | None = STATUS_LIST_LIMIT) -> list[FileChange]:
        """Indexed files whose size/mtime differ on disk, are gone, or unreadable (stat only,
        about 5 us per file), at most ``limit`` (all when None)."""
        store = self.database.connection()
        found = changed_documents(self.database.root, store.documents_by_path(), limit)
        return [FileChange(c["path"], c["change"]) for c in found]

    def changed_among(self, paths: Iterable[str]) -> dict[str, str]:
        """Which of ``paths`` (relative POSIX paths, e.g. the files of search hits) differ on
        disk right now from what was indexed: ``{path: "modified"|"missing"|"unreadable"}``. One
        ``stat`` per indexed path, never cached; paths that are not indexed are left out."""
        wanted = [p for p in dict.fromkeys(paths) if p]
        if not wanted:
            return {}
        known = self.database.connection().documents_by_path(wanted)
        return {c["path"]: c["change"] for c in changed_documents(self.database.root, known)}

    def invalidate(self) -> None:
        """Forget the cached probe (an answer just found files the cache may not know)."""
        self._cache = None

    def indexing(self) -> bool:
        """A run of this process, or another process holding the writer lock."""
        return self.activity.indexing or self.database.locked_elsewhere()

    def _facts(self) -> _Facts:
        """(counts, first failures, changed files, their number): the costly part of status
        (row counts and a stat of every indexed file, ~10 ms for 700 files), reused for
        ``REFRESH_TTL_SECONDS`` unless this process changed the index meanwhile."""
        key = (self.activity.generation, self.activity.indexing)
        cached = self._cache
        if cached is not None and cached[0] == key and time.monotonic() - cached[1] < REFRESH_TTL_SECONDS:
            return cached[2]
        store = self.database.connection()
        raw = store.counts()
        changed = self.changed_files(limit=None)  # all of them: the message says how many
        facts: _Facts = (
            IndexCounts(raw["documents"], raw["sections"], raw["passages"], raw["vectors"], raw["pending_vectors"]),
            store.failures(STATUS_LIST_LIMIT),
            changed[:STATUS_LIST_LIMIT],
            len(changed),
        )
        self._cache = (key, time.monotonic(), facts)
        return facts

    # -- sentences --------------------------------------------------------------------------
    def keyword_only_cause(self, ctx: messages.Context | None = None) -> str | None:
        """Why search has no vectors when that is known without the index (see
        ``messages.keyword_only``), worded for ``ctx``'s reader (default: the engine's)."""
        loader = self.loader
        instead = no_download_instead(self.context.embedder) if loader.error and loader.not_installed else None
        return messages.keyword_only(ctx or self.context, vec_available=self.database.connection().vec_available,
                                     model_error=loader.error, not_installed=loader.not_installed,
                                     loading=loader.loading, instead=instead)

    def empty_index_message(self, ctx: messages.Context | None = None) -> str | None:
        """Why a search found nothing when the index holds no document at all (None when it
        holds some). Two small queries; a lock probe only when the index is empty."""
        store = self.database.connection()
        if store.has_documents():
            return None
        return messages.empty_index(ctx or self.context, indexing=self.indexing(),
                                    ever_indexed=store.get_meta("last_run_at") is not None,
                                    moved=store.get_meta("moved_aside"),
                                    files_found=_int_or_none(store.get_meta("walk_files")), suffixes=MARKDOWN_SUFFIXES)

    # -- status ---------------------------------------------------------------------------------
    def status(self, ctx: messages.Context | None = None) -> IndexStatus:
        """Index health (see ``models.IndexStatus``), its message worded for ``ctx``'s reader
        (default: the engine's)."""
        store = self.database.connection()
        counts, failures, changed, changed_count = self._facts()
        last_at = store.get_meta("last_run_at")
        walked = store.get_meta("last_full_walk")
        indexing = self.indexing()
        killed_run = not indexing and self.database.run_marker().exists()  # a run died before it finished
        # a file that failed to index is known (it is in ``failures``, with its reason): only a
        # folder the walk could not list, a change since, or a run going or killed leave it unknown
        coverage = "verified" if (walked and last_at and store.get_meta("walk_complete") == "1" and not changed
                                  and not indexing and not killed_run) else "unknown"
        moved = store.get_meta("moved_aside")
        wid, _ = store.vector_space()
        expected = self.loader.expected_weights_id()
        other_build = wid if (wid and expected and counts.vectors and expected != wid) else None
        embedder = self.context.embedder
        keyword_only = (embedder == "none" or not store.vec_available or counts.vectors == 0
                        or other_build is not None)
        progress = self.activity.progress if self.activity.indexing else None
        reader = (ctx or self.context).program  # the sentences made deep down name this reader's command
        known = self.keyword_only_cause(ctx)
        problem = model_problem(embedder) if keyword_only and not known else None
        message = messages.status_sentence(
            ctx or self.context, counts=counts, changed=changed_count, indexing=indexing, progress=progress,
            ever_indexed=last_at is not None, keyword_only=keyword_only, moved=moved,
            other_build=other_vectors(embedder, other_build) if other_build else None, known_cause=known,
            model_problem=problem, files_found=_int_or_none(store.get_meta("walk_files")))
        if self.database.disk_full:  # the most urgent: nothing new can be indexed
            message = messages.prepend_note(self.database.disk_full, message)
        return IndexStatus(
            root=str(self.database.root),
            database=str(self.database.path),
            counts=counts,
            embedder=EmbedderState(embedder, self.loader.embedder is not None, wid, for_reader(self.loader.error, reader),
                                   self.loader.loading, for_reader(self.context.chosen, reader)),
            keyword_only=keyword_only,
            indexing=indexing,
            progress=progress,
            coverage=coverage,
            changed_files=tuple(changed),
            failures=tuple(failures),
            last_run=LastRun(float(last_at), float(store.get_meta("last_run_seconds") or 0)) if last_at else None,
            moved_aside=moved,
            message=message,
        )


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None
