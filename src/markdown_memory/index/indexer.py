"""Incremental indexer: walk -> diff against the store -> read, parse, write -> embed.

Phase 1 writes each changed document (sections, passages, FTS rows) in its own transaction,
so keyword search sees documents one by one and a killed run leaves whole documents only.
Phase 2 (``embedding.py``) embeds passages that have no vector yet in length-sorted batches across documents
(less padding), reusing stored vectors for identical (breadcrumb, text) pairs, and writes them
batch by batch. Unchanged files (same size and mtime) are only ``stat``-ed.

Reading policy: each file is opened once by ``files.read`` (no link followed below the root, no
wait on a FIFO, judged by ``fstat``); files over the size limit (``Settings.max_file_bytes``,
default ``MAX_FILE_BYTES``) are refused, by their walked size before any read and by the bytes
read; NUL bytes mean binary (refused); UTF-8
(with or without BOM) and UTF-16 with a BOM are decoded as such; other bytes are decoded as
Windows-1252 (Latin-1 for its 5 undefined bytes) with a warning, so no text is dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import messages
from ..agents.rules import blank_rules
from ..config import DEFAULT_MAX_FILE_MB
from ..embed.base import Embedder
from ..files.failure import Failure, FailureKind
from ..files.read import FileGone, FileRefused, read_entry
from ..files.walk import MARKDOWN_SUFFIXES, WalkEntry, WalkResult, name_is_text, walk_markdown, walk_one
from ..markdown import parse_document
from ..models import IndexReport
from ..reading.links import relink, relink_documents
from ..store import DocumentFile, StoredDocument
from ..store.errors import is_disk_full
from ..store.views import IndexWrites
from .embedding import Progress, embed_pending, passage_keys, reuse_identical_vectors
from .navigation import navigation_titles

log = logging.getLogger("markdown_memory.indexer")

MAX_FILE_BYTES = int(DEFAULT_MAX_FILE_MB * 1_000_000)
#: Bump when parsing changes what sections or passages a file yields: the next run re-parses
#: every file (an index built by an older parser would otherwise keep its old sections).
PARSER_VERSION = "11"  # 5: tags, names, code languages (markdown/vault.py); 6: links and block ids (markdown/links.py);
# 7: reference-style links, inline tags from the token stream (headings, no math/comments);
# 8: page titles (markdown/titles.py, index/navigation.py) and lead sections;
# 9: front matter with unfilled template placeholders ({{date}}, <% tp... %>) keeps its other keys;
# 10: wikilinks in front matter (Obsidian properties) are links of the first section
# 11: a page without H1 names its preamble by its front-matter title; id/slug/permalink/url are page addresses
#: Meta key of the navigation titles the stored documents were parsed with (JSON ``{path: title}``).
NAVIGATION_META = "navigation"



class RunTally:
    """A run's :class:`~markdown_memory.models.IndexReport` while it runs: ``report`` holds the
    counts so far (replaced, never mutated: its fields are the tally's), ``warnings`` the
    indexed files' warnings and ``failures`` the paths not indexed, in the order found."""

    def __init__(self, root: str) -> None:
        self.report = IndexReport(root=root)
        self.warnings: list[dict[str, str]] = []
        self.failures: list[Failure] = []

    def add(self, **counts: int) -> None:
        """Add to counts named as IndexReport's fields (``add(added=1, sections=4)``)."""
        self.report = replace(self.report, **{k: getattr(self.report, k) + v for k, v in counts.items()})

    def set(self, **values: Any) -> None:
        """Set fields named as IndexReport's (``set(interrupted=True)``)."""
        self.report = replace(self.report, **values)

    def warn(self, path: str, texts: Iterable[str]) -> None:
        """Add ``texts`` as warnings of the file ``path``."""
        self.warnings.extend({"path": path, "message": m} for m in texts)

    def warn_all(self, failures: Iterable[Failure]) -> None:
        """Add each failure as a warning of its file."""
        self.warnings.extend({"path": f.path, "message": f.message} for f in failures)

    def freeze(self, failed: Iterable[Failure]) -> IndexReport:
        """The report, with ``failed`` as its failed files (``{path, reason}``) and the warnings."""
        return replace(self.report, failed=tuple({"path": f.path, "reason": f.message} for f in failed),
                       warnings=tuple(self.warnings))


def decode_markdown(data: bytes) -> tuple[str, str | None]:
    """Bytes -> (text, warning or None). Raises FileRefused for binary content."""
    has_nul = b"\x00" in data[:8192]
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff")) and has_nul  # Markdown in UTF-16 has NULs
    if has_nul and not utf16:
        raise FileRefused("binary file (contains NUL bytes); not indexed", FailureKind.BINARY)
    if utf16:
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as exc:
            raise FileRefused(f"invalid UTF-16: {exc.reason} at byte {exc.start}", FailureKind.ENCODING) from exc
    note = None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # a UTF-16 byte-order mark on text that is not
        data = data[2:]
        note = "starts with a UTF-16 byte-order mark but is not UTF-16; the mark was ignored"
    try:
        return data.decode("utf-8-sig"), note
    except UnicodeDecodeError as exc:
        offset = exc.start
    chars = []
    for byte in data:
        chars.append(bytes([byte]).decode("cp1252", errors="strict") if byte not in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else chr(byte))
    warning = f"not valid UTF-8 (first bad byte at offset {offset}); decoded as Windows-1252"
    return "".join(chars), f"{note}; {warning}" if note else warning


def read_markdown(entry: WalkEntry, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes, str, str | None]:
    """Read one walked file of at most ``max_bytes`` -> (raw bytes, text, decode warning), opened
    and judged once (``files.read``: no link followed, no blocking on a FIFO). Raises
    FileRefused with a reason (for a larger file: its size and the limit)."""
    data = read_entry(entry, max_bytes + 1)
    if len(data) > max_bytes:
        raise FileRefused(messages.file_too_large(max(entry.size, len(data)), max_bytes), FailureKind.TOO_LARGE)
    text, warning = decode_markdown(data)
    return data, text, warning


def write_document(store: IndexWrites, rel: str, data: bytes, text: str, signature: tuple[int, int, int],
                   warnings: list[str], old_id: int | None, nav_title: str | None = None) -> tuple[int, int, int]:
    """Parse and replace one document in a single transaction; its unchanged passages (same
    embed key) keep their vectors. ``nav_title``: the site navigation's title for it.

    Returns (sections, passages, vectors reused from the old version)."""
    doc = parse_document(text, rel, nav_title=nav_title)
    file = DocumentFile(rel, hashlib.sha256(data).hexdigest(), signature, time.time(), tuple(warnings))
    keys = passage_keys(doc)
    reused = 0
    with store.transaction():
        old_vectors: dict[str, bytes] = {}
        # The row may have been replaced since the caller looked (a refresh in another thread or
        # process): trust only what the transaction sees.
        old_id = store.document_id(rel)
        if old_id is not None:
            old_vectors = store.old_vectors(old_id)
            store.delete_document(old_id)
        doc_id = store.insert_document(file, doc, keys)
        if old_vectors:
            pairs = [(pid, old_vectors[key]) for pid, key in store.passage_embed_keys(doc_id) if key in old_vectors]
            store.attach_vectors(pairs)
            reused = len(pairs)
            store.refresh_section_vectors(store.section_ids_of(doc_id))
    return len(doc.sections), len(doc.passages), reused


def index_tree(
    store: IndexWrites,
    root: Path,
    *,
    embedder: Callable[[], Embedder | None] | None,
    weights_id: str | None = None,
    exclude: list[str] | None = None,
    directory: Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> IndexReport:
    """Bring the index of ``root`` (or of ``directory`` inside it) up to date; files larger than
    ``max_file_bytes`` are reported in ``failed`` with their size and the limit.

    ``embedder`` is called (once) only when passages need vectors; None, or a provider that
    returns None, means keyword-only. ``weights_id`` is the id of the vectors that embedder would
    make, when known without loading it (``embed.base.expected_weights_id``): a run with nothing
    pending skips loading the model only when the stored vectors carry that id; otherwise the
    model is loaded and vectors of another build are replaced. Stored vectors are replaced only
    by a model that loaded: rewritten documents (``force``, edits) keep the vectors of their
    unchanged passages whatever model made them, so a run whose model cannot load (keyword-only)
    loses none; the one that loads drops them all at once (``store.ensure_vector_space``) and
    they are not counted as reused. ``should_stop`` is polled
    between documents and between embedding batches; a stopped run is resumable.
    Never raises for a bad file: it is reported in ``failed`` and the run goes on. A full disk
    stops the run with the driver's error (``store.errors.is_disk_full``); every document
    committed before stays, and no file is recorded as failed because of it.
    """
    started = time.monotonic()
    tally = RunTally(str(root))
    stop = should_stop or (lambda: False)
    force = _parser_changed(store) or force
    walk = walk_markdown(root, exclude, directory)
    prefix = "" if directory is None or directory == root else directory.relative_to(root).as_posix() + "/"
    known = {p: v for p, v in store.documents_by_path().items() if p.startswith(prefix)}
    tally.set(scanned=len(walk.files))
    if not walk.files:  # an empty folder, or one with no Markdown: exit 0, but never silently
        tally.warn(prefix.rstrip("/") or ".", [messages.no_markdown_files(MARKDOWN_SUFFIXES)])
    if not prefix and store.get_meta("walk_files") != str(len(walk.files)):
        with store.transaction():  # status's "N of M files" after a run that did not finish
            store.set_meta("walk_files", str(len(walk.files)))
    now = time.time()
    tally.failures = [*walk.problems, *(Failure(rel, FailureKind.SKIPPED, why) for rel, why in walk.skipped)]
    stored_id = store.vector_space()[0]
    nav, renamed = _navigation(store, root, walk.files, prefix)
    seen = _parse_files(store, walk.files, known, tally, force, max_file_bytes, progress, stop, nav, renamed)
    # a run stopped before every file was parsed is not a completed run: status keeps saying the
    # first run did not finish (or keeps the last completed run's time)
    parse_interrupted = tally.report.interrupted
    if not parse_interrupted:
        gone = [v.id for p, v in known.items() if p not in seen and not _under_failed_dir(p, walk.problems)]
        _remove_gone(store, gone, tally)
    counts = tally.report
    if counts.added or counts.updated or counts.removed:
        relink(store)  # links to notes created, renamed or deleted in this run
    changed = _record_walk(store, walk, prefix, tally, now, nav)
    failed = [f for f in tally.failures if not f.is_warning]
    tally.warn_all(f for f in tally.failures if f.is_warning)
    _embed_phase(store, tally, embedder, weights_id, stored_id, progress, stop)
    tally.set(seconds=round(time.monotonic() - started, 3))
    report = tally.report
    if not parse_interrupted and (changed or report.vectors_embedded or report.vectors_reused
                                  or store.get_meta("last_run_at") is None):
        with store.transaction():
            store.set_meta("last_run_at", str(now))
            store.set_meta("last_run_seconds", str(report.seconds))
    return tally.freeze(failed)


def _parser_changed(store: IndexWrites) -> bool:
    """True when the index holds sections of an older parser (every file is then re-parsed;
    unchanged passages keep their vectors); an empty index just records this parser."""
    if store.get_meta("parser_version") == PARSER_VERSION:
        return False
    if store.has_documents():
        return True
    with store.transaction():  # nothing parsed by an older parser: a resumable first run
        store.set_meta("parser_version", PARSER_VERSION)
    return False


def stored_navigation(store: IndexWrites) -> dict[str, str]:
    """The navigation titles (``{path: title}``) the stored documents were parsed with."""
    try:
        data = json.loads(store.get_meta(NAVIGATION_META) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _navigation(store: IndexWrites, root: Path, files: list[WalkEntry], prefix: str) -> tuple[dict[str, str], set[str]]:
    """This run's navigation titles of the whole root (``navigation.py``; outside ``prefix``
    the stored ones) and the paths whose title changed since the stored documents were parsed
    (they are parsed again, so an edited mkdocs.yml or SUMMARY.md re-titles its pages)."""
    old = stored_navigation(store)
    found = navigation_titles(root, [e.rel for e in files])
    new = {k: v for k, v in old.items() if not k.startswith(prefix)} | found
    return new, {p for p in set(old) | set(new) if old.get(p) != new.get(p)}


def _parse_files(store: IndexWrites, files: list[WalkEntry], known: dict[str, StoredDocument], tally: RunTally,
                 force: bool, max_file_bytes: int, progress: Progress | None, stop: Callable[[], bool],
                 nav: dict[str, str], renamed: set[str]) -> set[str]:
    """Phase 1 over the walked ``files`` (``index_file`` each, polling ``stop`` between them);
    ``nav``: navigation titles by path, ``renamed``: paths whose navigation title changed.
    Returns the paths looked at."""
    seen: set[str] = set()
    total = len(files)
    for n, entry in enumerate(files, start=1):
        if stop():
            tally.set(interrupted=True)
            break
        if progress and (n == 1 or n % 25 == 0):
            progress("parse", n - 1, total)
        seen.add(entry.rel)
        index_file(store, entry, known.get(entry.rel), tally, force=force or entry.rel in renamed,
                   max_file_bytes=max_file_bytes, nav_title=nav.get(entry.rel))
        if progress:
            progress("parse", n, total)
    if progress and not tally.report.interrupted:
        progress("parse", total, total)
    return seen


def _remove_gone(store: IndexWrites, gone: list[int], tally: RunTally) -> None:
    """Delete the documents ``gone`` (ids) whose files disappeared, each in its own transaction."""
    if gone and tally.report.added:
        # a moved or renamed file (folder): its new passages take the vectors of the old
        # ones before those are deleted, instead of being embedded again
        tally.add(vectors_reused=reuse_identical_vectors(store))
    for doc_id in gone:
        with store.transaction():
            store.delete_document(doc_id)
        tally.add(removed=1)


def _record_walk(store: IndexWrites, walk: WalkResult, prefix: str, tally: RunTally, now: float,
                 nav: dict[str, str]) -> bool:
    """Record the run's failures, walk facts and navigation titles (``nav``), writing only what
    differs: a run that found nothing new leaves the database untouched (no write transaction,
    no WAL growth). Returns True when the index changed (documents written or removed, or these
    records)."""
    stored_failures = {(f.path, f.kind, f.reason) for f in store.all_failures() if f.path.startswith(prefix)}
    counts = tally.report
    changed = bool(counts.added or counts.updated or counts.removed)
    meta: dict[str, str] = {}
    if not counts.interrupted:  # a stopped run parsed only some pages with these titles
        meta[NAVIGATION_META] = json.dumps(nav, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if not prefix:
        if counts.interrupted:  # files after the stop point were never looked at
            meta["walk_complete"] = "0"
        else:
            meta["walk_complete"] = "1" if walk.complete else "0"
            meta["dir_mtimes"] = json.dumps(walk.dirs, separators=(",", ":"))
            meta["parser_version"] = PARSER_VERSION
            if changed or store.get_meta("last_full_walk") is None:
                meta["last_full_walk"] = str(now)
    meta = {k: v for k, v in meta.items() if store.get_meta(k) != v}
    rows = [(f.path, f.severity, f.message) for f in tally.failures]
    if stored_failures != set(rows) or meta:
        with store.transaction():
            store.clear_failures([p for p, _k, _r in stored_failures])
            for rel, kind, reason in rows:
                store.record_failure(rel, kind, reason, now)
            for key, value in meta.items():
                store.set_meta(key, value)
        changed = True
    return changed


def _embed_phase(store: IndexWrites, tally: RunTally, embedder: Callable[[], Embedder | None] | None,
                 weights_id: str | None, stored_id: str | None, progress: Progress | None,
                 stop: Callable[[], bool]) -> None:
    """Phase 2: embed pending passages (see ``index_tree`` for when the model is loaded)."""
    if embedder is None or not store.vec_available:
        tally.set(keyword_only=True)
        return
    if tally.report.interrupted:
        return
    pending = store.counts()["pending_vectors"]
    same_model = weights_id is not None and stored_id == weights_id  # the parse above kept the space
    emb = None if (pending == 0 and same_model and store.has_vec_tables()) else embedder()
    if emb is None:
        if not (pending == 0 and same_model):
            tally.set(keyword_only=True)
        return
    if stored_id is not None and emb.weights_id != stored_id:
        tally.set(vectors_reused=0)  # the parse kept another model's vectors: this one replaces them all
    embedded, reused = embed_pending(store, emb, progress=progress, should_stop=stop)
    tally.add(vectors_embedded=embedded, vectors_reused=reused)
    if stop():
        tally.set(interrupted=True)


def index_file(
    store: IndexWrites,
    entry: WalkEntry,
    old: StoredDocument | None,
    tally: RunTally,
    *,
    force: bool = False,
    max_file_bytes: int = MAX_FILE_BYTES,
    nav_title: str | None = None,
) -> None:
    """Bring one file's document up to date (keyword index; vectors are embedded later; the
    unchanged passages of a rewritten document keep theirs). ``nav_title``: the site
    navigation's title for it (``navigation.py``).

    ``old`` is the stored ``StoredDocument(id, sha256, (size, mtime_ns, ctime_ns))`` or None. A file over
    ``max_file_bytes`` is refused (its stored document removed) without being opened. An unchanged
    stat signature skips reading; an unchanged sha256 only updates the stat fields. Counts and
    warnings go to ``tally``, a file not indexed to ``tally.failures``. Never raises for a bad file.
    """
    too_large = entry.size > max_file_bytes  # judged before anything else: a lowered limit applies at once
    if not too_large and old is not None and not force and old.signature == entry.signature:
        tally.add(unchanged=1)
        tally.warn(entry.rel, store.document_warnings(entry.rel))
        return
    try:
        if too_large:  # not even opened: a huge file costs a stat per run
            raise FileRefused(messages.file_too_large(entry.size, max_file_bytes), FailureKind.TOO_LARGE)
        data, text, decode_warning = read_markdown(entry, max_file_bytes)
    except FileRefused as exc:
        if not isinstance(exc, FileGone):  # deleted since the walk: removed, nothing failed
            tally.failures.append(Failure(entry.rel, exc.kind, str(exc)))
        if old is not None:  # never serve the old text of a file we can no longer read
            with store.transaction():
                store.delete_document(old.id)
            tally.add(removed=1)
        return
    if old is not None and not force and hashlib.sha256(data).hexdigest() == old.sha256:
        with store.transaction():
            store.touch_document(old.id, entry.signature)
        tally.add(unchanged=1)
        tally.warn(entry.rel, store.document_warnings(entry.rel))
        return
    warnings = [decode_warning] if decode_warning else []
    text, block = blank_rules(text)  # the tool's own instructions are never served as docs
    if block is not None:
        if not text.strip():  # the file setup created for its block: nothing else to index
            _leave_out(store, entry.rel, old, tally, messages.rules_file_left_out())
            return
        warnings.append(messages.rules_block_left_out(*block))
    try:
        secs, pas, reused = write_document(
            store, entry.rel, data, text, entry.signature, warnings, old.id if old else None, nav_title,
        )
    except Exception as exc:  # a parser bug must not stop the run
        if is_disk_full(exc, store.path):
            raise  # not this file's fault: the run stops, keeping every document written so far
        log.exception("failed to index %s", entry.rel)
        tally.failures.append(Failure(entry.rel, FailureKind.INTERNAL, f"internal error while indexing: {exc}"))
        return
    tally.add(sections=secs, passages=pas, vectors_reused=reused, added=int(old is None), updated=int(old is not None))
    for w in store.document_warnings(entry.rel):
        if w not in warnings:
            warnings.append(w)
    tally.warn(entry.rel, warnings)
    for w in warnings:  # said when found (not again for an unchanged file); `index` prints its report instead
        log.warning("%s: %s", entry.rel, w)


def _leave_out(store: IndexWrites, rel: str, old: StoredDocument | None, tally: RunTally, why: str) -> None:
    """Keep ``rel`` out of the index (its stored document removed), saying ``why`` in the report."""
    if old is not None:
        with store.transaction():
            store.delete_document(old.id)
        tally.add(removed=1)
    tally.warn(rel, [why])


def refresh_paths(store: IndexWrites, root: Path, paths: list[str], exclude: list[str] | None = None,
                  max_file_bytes: int = MAX_FILE_BYTES) -> IndexReport:
    """Re-check specific documents now (edited, deleted, unreadable or new files), keyword
    index only: their passages get vectors in the next index run (passages whose text did not
    change keep their vectors at once). ``paths`` are POSIX paths relative to ``root``.

    A path that is gone, ignored, or no longer a regular Markdown file is purged. Failures are
    recorded like an index run's (a path ``walk_one`` refuses, a symbolic link included, as failed). Only the links these documents hold, and those that name them
    (before or after), are resolved again (``relink_documents``; an index run re-resolves all). Takes milliseconds per file; never raises for a bad file.
    """
    started = time.monotonic()
    tally = RunTally(str(root))
    known = store.documents_by_path()
    paths = [p for p in paths if name_is_text(p)]  # never indexed (walk.py); SQLite refuses them
    before = store.links.document_names_at(paths)  # as links named them: only links these can reach are re-resolved
    nav = stored_navigation(store)  # as the last index run read it
    gone: list[int] = []
    for rel in dict.fromkeys(paths):
        entry = walk_one(root, rel, exclude)
        old = known.get(rel)
        tally.add(scanned=1)
        if isinstance(entry, str):
            if old is not None:
                gone.append(old.id)
            if entry:
                tally.failures.append(Failure(rel, FailureKind.REFUSED, entry))
            continue
        index_file(store, entry, old, tally, max_file_bytes=max_file_bytes, nav_title=nav.get(rel))
    _remove_gone(store, gone, tally)  # a move: see index_tree
    if tally.report.added or tally.report.updated or tally.report.removed:
        relink_documents(store, before, store.links.document_names_at(paths))
    with store.transaction():
        store.clear_failures(list(dict.fromkeys(paths)))
        now = time.time()
        for f in tally.failures:
            store.record_failure(f.path, f.severity, f.message, now)
    tally.set(seconds=round(time.monotonic() - started, 3))
    return tally.freeze(tally.failures)


def _under_failed_dir(path: str, problems: list[Failure]) -> bool:
    """A file under a directory we could not list is not known to be deleted: keep it."""
    return any(path.startswith(f.path + "/") for f in problems)
