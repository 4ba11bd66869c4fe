"""The engine's reports on the index itself: ``IndexStatus`` (and its parts) and ``IndexReport``
/ ``IndexOutcome`` of an index run; frozen dataclasses with one ``to_dict()`` each (the wire
format, as in :mod:`markdown_memory.models`, which re-exports every name here)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from ..text import short_cause

#: the ``message`` an agent's ``index_status`` carries while a run is under way and the status
#: itself has nothing more urgent to say
INDEXING_NOTE = "indexing in progress: results may be incomplete until it finishes; search again shortly"
#: index_directory answers list at most this many failed files and warnings
REPORT_LIST_LIMIT = 50


# -- status ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexCounts:
    documents: int = 0
    sections: int = 0
    passages: int = 0
    vectors: int = 0
    pending_vectors: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"documents": self.documents, "sections": self.sections, "passages": self.passages,
                "vectors": self.vectors, "pending_vectors": self.pending_vectors}


@dataclass(frozen=True)
class EmbedderState:
    """The configured preset, whether it is loaded (or still ``loading`` in the background),
    the ``weights_id`` of the stored vectors, why it cannot load (``error``), and why it was
    chosen when no flag or environment named it and it is not simply the default (``chosen``;
    the key is left out of the JSON otherwise)."""

    name: str
    loaded: bool
    weights_id: str | None
    error: str | None
    loading: bool = False
    chosen: str | None = None

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "loaded": self.loaded}
        if agent:
            data["error"] = short_cause(self.error) if self.error else self.error
            if self.loading:
                data["loading"] = True
        else:
            data.update(weights_id=self.weights_id, error=self.error)
        if self.chosen:
            data["chosen"] = self.chosen
        return data


@dataclass(frozen=True)
class IndexProgress:
    """A running index run: ``phase`` "parse" (``done``/``total`` files) or "embed" (passages)."""

    phase: str
    done: int
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "done": self.done, "total": self.total}


@dataclass(frozen=True)
class FileChange:
    """An indexed file that differs on disk: ``change`` "modified" | "missing" | "unreadable"."""

    path: str
    change: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "change": self.change}


@dataclass(frozen=True)
class LastRun:
    """The last completed index run: started ``at`` (epoch seconds), took ``seconds``."""

    at: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at)),
                "seconds": self.seconds}


@dataclass(frozen=True)
class IndexStatus:
    """Index health. ``coverage`` "verified" (the last full walk listed every folder, each file it
    found is indexed or in ``failures``, nothing changed since, no run is going or was killed) or
    "unknown"; ``changed_files`` and ``failures`` hold the first 20; ``failures``
    items are ``{path, kind, reason}``; ``moved_aside`` is where a damaged database went;
    ``message`` the one sentence to act on (None when healthy)."""

    root: str
    database: str
    counts: IndexCounts
    embedder: EmbedderState
    keyword_only: bool
    indexing: bool
    progress: IndexProgress | None
    coverage: str
    changed_files: tuple[FileChange, ...]
    failures: tuple[dict[str, str], ...]
    last_run: LastRun | None
    moved_aside: str | None
    message: str | None

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        """The full status (CLI ``status``), or with ``agent`` what an agent needs on every
        answer: no database path or pending count, the embedder's error as its cause only."""
        if agent:
            return self._agent_dict()
        return {
            "root": self.root,
            "database": self.database,
            **self.counts.to_dict(),
            "embedder": self.embedder.to_dict(),
            "keyword_only": self.keyword_only,
            "indexing": self.indexing,
            "progress": self.progress.to_dict() if self.progress else None,
            "coverage": self.coverage,
            "changed_files": [c.to_dict() for c in self.changed_files],
            "failures": [dict(f) for f in self.failures],
            "last_run": self.last_run.to_dict() if self.last_run else None,
            "moved_aside": self.moved_aside,
            "message": self.message,
        }

    def _agent_dict(self) -> dict[str, Any]:
        embedder = self.embedder.to_dict(agent=True)
        message = self.message
        if self.indexing and (self.last_run is None or message is None):
            message = INDEXING_NOTE
        data: dict[str, Any] = {
            "root": self.root,
            "documents": self.counts.documents,
            "sections": self.counts.sections,
            "passages": self.counts.passages,
            "vectors": self.counts.vectors,
            "indexing": self.indexing,
            "coverage": self.coverage,
            "changed_files": [c.to_dict() for c in self.changed_files],
            "failures": [dict(f) for f in self.failures],
            "last_run": self.last_run.to_dict() if self.last_run else None,
            "embedder": embedder,
            "keyword_only": self.keyword_only,
            "message": message,
        }
        if self.indexing:
            data["progress"] = self.progress.to_dict() if self.progress else None
        return data


# -- index ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexReport:
    """What one index run did. Counts are files unless named otherwise; ``failed`` items are
    ``{path, reason}``, ``warnings`` items ``{path, message}``; ``seconds`` is wall time;
    ``interrupted`` when it was asked to stop (the next run resumes)."""

    root: str
    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: tuple[dict[str, str], ...] = ()
    warnings: tuple[dict[str, str], ...] = ()
    sections: int = 0
    passages: int = 0
    vectors_embedded: int = 0
    vectors_reused: int = 0
    keyword_only: bool = False
    message: str | None = None
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def indexed(self) -> int:
        return self.added + self.updated

    def with_message(self, message: str | None) -> IndexReport:
        return replace(self, message=message)

    def to_dict(self, *, agent: bool = False) -> dict[str, Any]:
        """``agent``: at most ``REPORT_LIST_LIMIT`` failed files and warnings."""
        limit = REPORT_LIST_LIMIT if agent else None
        return {
            "root": self.root, "scanned": self.scanned, "added": self.added, "updated": self.updated,
            "unchanged": self.unchanged, "removed": self.removed,
            "failed": [dict(f) for f in self.failed[:limit]],
            "warnings": [dict(w) for w in self.warnings[:limit]],
            "sections": self.sections, "passages": self.passages, "vectors_embedded": self.vectors_embedded,
            "vectors_reused": self.vectors_reused, "keyword_only": self.keyword_only, "message": self.message,
            "seconds": self.seconds, "interrupted": self.interrupted, "indexed": self.indexed,
        }


@dataclass(frozen=True)
class IndexOutcome:
    """The answer of ``index_directory``: the run's ``report``, or (``report`` None) that a run
    is already in progress, with the ``message`` saying so; with the status after it."""

    report: IndexReport | None
    index_status: IndexStatus
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """An agent's view (failed files and warnings capped, the agent's status)."""
        if self.report is None:
            return {"in_progress": True, "message": self.message,
                    "index_status": self.index_status.to_dict(agent=True)}
        data = self.report.to_dict(agent=True)
        data["index_status"] = self.index_status.to_dict(agent=True)
        return data
