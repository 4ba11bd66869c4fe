"""Index health for the engine: counts, changed files, failures, coverage, and the one
sentence an agent should act on (``Engine.status``). A mixin of :class:`~markdown_memory.engine.Engine`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import filelock

from .config import DEFAULT_EMBEDDER
from .embed.base import model_problem, preset_of_weights_id
from .freshness import changed_documents

if TYPE_CHECKING:  # pragma: no cover
    from .store import Store

#: A stat probe of the indexed files (refresh, status) is reused for this long (seconds).
REFRESH_TTL_SECONDS = 0.5


def prepend_note(note: str, message: str | None) -> str:
    """``note`` first, then the answer's other ``message`` if any: ``"note; message"``."""
    return f"{note}; {message}" if message else note


class StatusMixin:
    """``changed_files``, ``indexing_elsewhere`` and ``status`` over the engine's state."""

    store: "Store"
    root: Path
    _status_cache: Any

    def changed_files(self, limit: int | None = 20) -> list[dict[str, str]]:
        """Indexed files whose size/mtime differ on disk, are gone, or unreadable (stat only,
        about 5 us per file): ``[{"path", "change": "modified"|"missing"|"unreadable"}]``,
        at most ``limit`` entries (all when None)."""
        return changed_documents(self.root, self.store.documents_by_path(), limit)

    def changed_among(self, paths: Iterable[str]) -> dict[str, str]:
        """Which of ``paths`` (POSIX paths relative to the root, e.g. the files of search hits)
        differ on disk right now from what was indexed: ``{path: "modified"|"missing"|
        "unreadable"}``. One ``stat`` per indexed path, never cached (unlike ``changed_files``
        in ``status``); paths that are not indexed are left out."""
        wanted = [p for p in dict.fromkeys(paths) if p]
        if not wanted:
            return {}
        known = self.store.documents_by_path(wanted)
        return {c["path"]: c["change"] for c in changed_documents(self.root, known)}

    def mark_stale(self, hits: list[dict[str, Any]], changed: dict[str, str] | None = None) -> dict[str, str]:
        """Set ``hit["stale"] = "modified"|"missing"|"unreadable"`` on the hits whose
        ``file_path`` differs on disk now from what was indexed (their text and lines may be
        outdated), so an answer never passes them off as current. One ``stat`` per distinct
        file, unless the caller has just done that: ``changed`` = ``changed_among`` of these
        hits. Returns ``{path: change}`` of the files flagged."""
        if changed is None:
            changed = self.changed_among(h.get("file_path", "") for h in hits)
        for hit in hits:
            change = changed.get(hit.get("file_path", ""))
            if change:
                hit["stale"] = change
        if changed:
            self._status_cache = None  # status must not contradict the flag with an older probe
        return changed

    def indexing_elsewhere(self) -> bool:
        """True when another process (or thread of this one) holds the writer lock right now.
        Probes with a non-blocking acquire that is released at once."""
        lock = self.writer_lock()
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            return True
        except OSError:
            return False
        lock.release()
        return False

    def _status_facts(self) -> tuple[dict[str, int], list[dict[str, str]], int, list[dict[str, str]]]:
        """(counts, first 20 failures, failed files, changed files): the costly part of status
        (row counts and a stat of every indexed file, ~10 ms for 700 files), reused for
        ``REFRESH_TTL_SECONDS`` unless this process changed the index meanwhile."""
        key = (self._index_generation, self.indexing)
        cached = self._status_cache
        if cached is not None and cached[0] == key and time.monotonic() - cached[1] < REFRESH_TTL_SECONDS:
            return cached[2]
        store = self.store
        facts = (
            store.counts(),
            store.failures(20),
            store.failed_file_count(),
            self.changed_files(),
        )
        self._status_cache = (key, time.monotonic(), facts)
        return facts

    def status(self) -> dict[str, Any]:
        """Index health: root, counts, embedder, indexing (+ progress: phase, done, total files
        or passages), coverage ("verified" | "unknown"), changed files (first 20), failures
        (first 20), last run ({at: epoch s, when: ISO 8601 UTC, seconds}), ``moved_aside``
        (where a damaged database went, until the rebuild completes) and one actionable
        ``message`` (or None)."""
        store = self.store
        counts, failures, failed_files, changed = self._status_facts()
        last_at = store.get_meta("last_run_at")
        walked = store.get_meta("last_full_walk")
        indexing = self.indexing or self.indexing_elsewhere()
        killed_run = not indexing and self.run_marker().exists()  # a run died before it finished
        coverage = "verified" if (walked and last_at and store.get_meta("walk_complete") == "1" and not changed
                                  and not failed_files and not indexing and not killed_run) else "unknown"
        moved = store.get_meta("moved_aside")
        wid, _ = store.vector_space()
        expected = self._expected_weights_id()
        other_build = wid if (wid and expected and counts["vectors"] and expected != wid) else None
        keyword_only = (self.settings.embedder == "none" or not store.vec_available or counts["vectors"] == 0
                        or other_build is not None)
        emb_name = self.settings.embedder
        progress = dict(self.progress) if self.indexing and self.progress else None
        return {
            "root": str(self.root),
            "database": str(self.settings.db_path),
            **counts,
            "embedder": {
                "name": emb_name,
                "loaded": self._embedder is not None,
                "weights_id": wid,
                "error": self._embedder_error,
            },
            "keyword_only": keyword_only,
            "indexing": indexing,
            "progress": progress,
            "coverage": coverage,
            "changed_files": changed,
            "failures": failures,
            "last_run": {
                "at": float(last_at),
                "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(last_at))),
                "seconds": float(store.get_meta("last_run_seconds") or 0),
            } if last_at else None,
            "moved_aside": moved,
            "message": self._status_message(counts, changed, indexing, progress, last_at, keyword_only, moved,
                                            other_build),
        }

    def empty_index_message(self) -> str | None:
        """Why a search found nothing when the index holds no document at all (None when it holds
        some): the root was never indexed (and how to index it), its first run is under way, or
        the last run found no Markdown file it could index. Two small queries; a lock probe only
        when the index is empty."""
        store = self.store
        if store.has_documents():
            return None
        root = str(self.root)
        if self.indexing or self.indexing_elsewhere():
            return (f"the docs root {root!r} is being indexed and no document is searchable yet (this says nothing "
                    "about what the docs cover); search again shortly")
        how = f"{self._index_hint()} to index it, then search again"
        if store.get_meta("last_run_at") is None:
            return (f"the docs root {root!r} has not been indexed yet, so no document was searched (this says "
                    f"nothing about what the docs cover); {how}")
        return (f"the index of the docs root {root!r} holds no documents: the last index run found no Markdown "
                "file it could index there (its failures are in `markdown-memory status`)")

    def _index_hint(self) -> str:
        """How to run an index for this root with this embedder: the MCP tool, and the CLI
        command (with ``--embedder`` when it is not the default, which a bare command would use)."""
        flag = "" if self.settings.embedder == DEFAULT_EMBEDDER else f" --embedder {self.settings.embedder}"
        return f"call index_directory (or run `markdown-memory{flag} index`)"

    def _other_vectors_message(self, other: str) -> str:
        """Why search is keyword-only when the stored vectors (``weights_id`` ``other``) are not
        the configured model's, and the fix: another preset's vectors name the flag that uses
        them as well as the re-index that replaces them."""
        how = self._index_hint()
        configured = self.settings.embedder
        itself = " (the server starts it by itself)" if self.auto_refresh else ""
        maker = preset_of_weights_id(other)
        if maker and maker != configured:
            return (f"keyword-only: the index's vectors were made by the {maker} model ({other}), not the configured "
                    f"{configured}; run with `--embedder {maker}` (MARKDOWN_MEMORY_EMBEDDER={maker}) to use them, "
                    f"or {how} to re-embed them with {configured}{itself}")
        return (f"keyword-only: the index's vectors were made by another build of the {configured} model "
                f"({other}); {how} to re-embed them{itself}")

    def _status_message(self, counts: dict[str, int], changed: list[dict[str, str]], indexing: bool,
                        progress: dict[str, int] | None, last_at: str | None, keyword_only: bool,
                        moved: str | None, other_build: str | None = None) -> str | None:
        """The one sentence an agent should act on, most urgent first (None when healthy)."""
        how = self._index_hint()
        if moved and (indexing or self.auto_refresh):
            return (f"the index database was damaged and was moved aside to {moved}; it is being rebuilt, "
                    "so results are incomplete until that finishes")
        if moved:
            return f"the index database was damaged and was moved aside to {moved}; {how} to rebuild it"
        if indexing:
            done = f" ({progress['done']}/{progress['total']} {'files' if progress.get('phase') == 'parse' else 'passages embedded'})" if progress else ""
            first = " for the first time" if last_at is None else ""
            return (f"indexing{first} in progress{done}: results may be incomplete until it finishes; "
                    "search again shortly")
        if last_at is None and counts["documents"]:
            return f"the last index run did not finish ({counts['documents']} documents indexed so far); {how} to complete it"
        if last_at is None:
            if self.auto_refresh:
                return "the docs root has not been indexed yet; indexing starts with the first search"
            return f"the docs root has not been indexed yet; {how}"
        if changed:
            if self.auto_refresh:
                return (f"{len(changed)} indexed file(s) changed on disk and are re-indexed automatically "
                        "within seconds; hits from them may be outdated until then")
            return f"{len(changed)} indexed file(s) changed on disk; {how} to refresh them"
        if other_build and not self._keyword_only_message():
            return self._other_vectors_message(other_build)
        if keyword_only:
            known = self._keyword_only_message()
            if known:
                return known
            problem = model_problem(self.settings.embedder)
            if problem:
                return f"keyword-only: {problem}; then re-index"
            return f"no vectors yet: {how} to compute them"
        if counts["pending_vectors"]:
            return f"{counts['pending_vectors']} passages still wait for vectors; search is partly keyword-only"
        return None
