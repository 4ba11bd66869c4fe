"""Incremental indexer: walk -> diff against the store -> read, parse, write -> embed.

Phase 1 writes each changed document (sections, passages, FTS rows) in its own transaction,
so keyword search sees documents one by one and a killed run leaves whole documents only.
Phase 2 embeds passages that have no vector yet in length-sorted batches across documents
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
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path

from .. import messages
from ..config import DEFAULT_MAX_FILE_MB
from ..embed.base import Embedder
from ..embed.onnx_runtime import CALLS_IN_FLIGHT
from ..files.read import FileRefused, read_entry
from ..files.walk import WalkEntry, name_is_text, walk_markdown, walk_one
from ..markdown import ParsedDocument, parse_document
from ..markdown.passages import embed_body, pack_runs, run_text
from ..models import IndexReport
from ..reading.links import relink
from ..store import Store, StoredDocument, vector_blob
from ..store.errors import is_disk_full
from ..text import count_tokens, elide_data_uris

log = logging.getLogger("markdown_memory.indexer")

MAX_FILE_BYTES = int(DEFAULT_MAX_FILE_MB * 1_000_000)
#: Bump when parsing changes what sections or passages a file yields: the next run re-parses
#: every file (an index built by an older parser would otherwise keep its old sections).
PARSER_VERSION = "5"  # 5: links and block ids (markdown/links.py)
EMBED_CHUNK = 64  # texts embedded and written per transaction (also the stop granularity: < 1 s)
#: Chunks embedded at once (threads calling the model). With small length-sorted batches one
#: onnxruntime call keeps ~1 of 2 cores busy; two calls in flight measured 1.15-1.5x the tokens/s
#: on 2 cores (README.md, "Performance"). The main thread writes while the model runs.
EMBED_WORKERS = CALLS_IN_FLIGHT  # 2

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass
class RunTally:
    """What a run has done so far (mutable while it runs); ``freeze()`` is the run's
    :class:`~markdown_memory.models.IndexReport`. Counts are files unless named otherwise."""

    root: str
    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    sections: int = 0
    passages: int = 0
    vectors_embedded: int = 0
    vectors_reused: int = 0
    keyword_only: bool = False
    seconds: float = 0.0
    interrupted: bool = False

    def freeze(self) -> IndexReport:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["failed"] = tuple(self.failed)
        values["warnings"] = tuple(self.warnings)
        return IndexReport(**values)


def decode_markdown(data: bytes) -> tuple[str, str | None]:
    """Bytes -> (text, warning or None). Raises FileRefused for binary content."""
    has_nul = b"\x00" in data[:8192]
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff")) and has_nul  # Markdown in UTF-16 has NULs
    if has_nul and not utf16:
        raise FileRefused("binary file (contains NUL bytes); not indexed")
    if utf16:
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as exc:
            raise FileRefused(f"invalid UTF-16: {exc.reason} at byte {exc.start}") from exc
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
        raise FileRefused(messages.file_too_large(max(entry.size, len(data)), max_bytes))
    text, warning = decode_markdown(data)
    return data, text, warning


def embed_key(title: str, text: str) -> str:
    """Identity of what gets embedded for a passage: sha256 of (embedding title, text)."""
    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()[:32]


def embedding_title(doc_title: str, base_path: str, level: int) -> str:
    """The breadcrumb put in front of each passage when embedding: the document title, then
    the section breadcrumb (``"Title > Install > Linux"``), the title given once when the
    breadcrumb already starts with it (an H1 that is the title). The preamble / a heading-less
    file gets the document title alone."""
    if level == 0 or not base_path:
        return doc_title
    if not doc_title or base_path == doc_title or base_path.startswith(doc_title + " > "):
        return base_path
    return f"{doc_title} > {base_path}"


def passage_keys(doc: ParsedDocument) -> list[str]:
    """``embed_key`` of each passage of a parsed document, in order: the key of its own text, or
    for a member of a packed run (``passages.pack_runs``: adjacent small list items / table rows
    of one section) the key of the run's joined text, which all members share and embed once."""
    keys: list[str] = []
    passages = doc.passages
    start = 0
    while start < len(passages):
        end = start
        while end < len(passages) and passages[end].section == passages[start].section:
            end += 1
        sec = doc.sections[passages[start].section]
        title = embedding_title(doc.title, sec.base_path, sec.level)
        run = passages[start:end]
        for group in pack_runs([(p.kind, p.text, p.start_line, p.end_line) for p in run]):
            key = embed_key(title, run_text([embed_body(run[i].kind, run[i].text) for i in group]))
            keys.extend([key] * len(group))
        start = end
    return keys


def write_document(store: Store, rel: str, data: bytes, text: str, signature: tuple[int, int, int],
                   warnings: list[str], old_id: int | None, *, reuse_vectors: bool = True) -> tuple[int, int, int]:
    """Parse and replace one document in a single transaction; with ``reuse_vectors`` its
    unchanged passages (same embed key) keep their vectors.

    Returns (sections, passages, vectors reused from the old version)."""
    doc = parse_document(text, rel)
    sha = hashlib.sha256(data).hexdigest()
    record = {
        "path": rel,
        "sha256": sha,
        "size": signature[0],
        "mtime_ns": signature[1],
        "ctime_ns": signature[2],
        "title": doc.title,
        "metadata": doc.metadata,
        "warnings": warnings + doc.warnings,
        "line_count": doc.line_count,
        "tokens": count_tokens(elide_data_uris(text)),
        "indexed_at": time.time(),
    }
    keyed = list(zip(doc.passages, passage_keys(doc)))
    reused = 0
    with store.transaction():
        old_vectors: dict[str, bytes] = {}
        # The row may have been replaced since the caller looked (a refresh in another thread or
        # process): trust only what the transaction sees.
        old_id = store.document_id(rel)
        if old_id is not None:
            old_vectors = store.old_vectors(old_id) if reuse_vectors else {}
            store.delete_document(old_id)
        doc_id = store.insert_document(record, doc.sections, keyed, doc.links, doc.block_ids)
        if old_vectors:
            pairs = [(pid, old_vectors[key]) for pid, key in store.passage_embed_keys(doc_id) if key in old_vectors]
            store.attach_vectors(pairs)
            reused = len(pairs)
            store.refresh_section_vectors(store.section_ids_of(doc_id))
    for w in doc.warnings:
        log.warning("%s: %s", rel, w)
    return len(doc.sections), len(doc.passages), reused


def index_tree(
    store: Store,
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
    model is loaded and vectors of another build are replaced. ``should_stop`` is polled
    between documents and between embedding batches; a stopped run is resumable.
    Never raises for a bad file: it is reported in ``failed`` and the run goes on. A full disk
    stops the run with the driver's error (``store.errors.is_disk_full``); every document
    committed before stays, and no file is recorded as failed because of it.
    """
    started = time.monotonic()
    report = RunTally(root=str(root))
    stop = should_stop or (lambda: False)
    if store.get_meta("parser_version") != PARSER_VERSION:
        if not store.has_documents():
            with store.transaction():  # nothing parsed by an older parser: a resumable first run
                store.set_meta("parser_version", PARSER_VERSION)
        else:
            force = True  # sections from an older parser: re-parse all (unchanged passages keep vectors)
    walk = walk_markdown(root, exclude, directory)
    prefix = "" if directory is None or directory == root else directory.relative_to(root).as_posix() + "/"
    known = {p: v for p, v in store.documents_by_path().items() if p.startswith(prefix)}
    report.scanned = len(walk.files)
    now = time.time()
    failures: list[tuple[str, str, str]] = []
    for rel, reason in walk.problems:
        kind = "warning" if "symbolic link" in reason else "failed"
        failures.append((rel, kind, reason))
    failures.extend((rel, "warning", reason) for rel, reason in walk.skipped)
    seen: set[str] = set()
    total = len(walk.files)
    stored_id = store.vector_space()[0]
    reuse = weights_id is None or stored_id is None or stored_id == weights_id  # else: replaced below
    for n, entry in enumerate(walk.files, start=1):
        if stop():
            report.interrupted = True
            break
        if progress and (n == 1 or n % 25 == 0):
            progress("parse", n - 1, total)
        seen.add(entry.rel)
        index_file(store, entry, known.get(entry.rel), report, failures, force=force, reuse_vectors=reuse,
                   max_file_bytes=max_file_bytes)
        if progress:
            progress("parse", n, total)
    if progress and not report.interrupted:
        progress("parse", total, total)
    # a run stopped before every file was parsed is not a completed run: status keeps saying the
    # first run did not finish (or keeps the last completed run's time)
    parse_interrupted = report.interrupted
    if not report.interrupted:
        gone = [(p, v.id) for p, v in known.items() if p not in seen and not _under_failed_dir(p, walk.problems)]
        for _path, doc_id in gone:
            with store.transaction():
                store.delete_document(doc_id)
            report.removed += 1
    if report.added or report.updated or report.removed:
        relink(store)  # links to notes created, renamed or deleted in this run
    # Record failures and walk facts, writing only what differs: a run that found nothing new
    # leaves the database untouched (no write transaction, no WAL growth).
    stored_failures = {(f.path, f.kind, f.reason) for f in store.all_failures() if f.path.startswith(prefix)}
    changed = bool(report.added or report.updated or report.removed)
    meta: dict[str, str] = {}
    if not prefix:
        if report.interrupted:  # files after the stop point were never looked at
            meta["walk_complete"] = "0"
        else:
            meta["walk_complete"] = "1" if walk.complete else "0"
            meta["dir_mtimes"] = json.dumps(walk.dirs, separators=(",", ":"))
            meta["parser_version"] = PARSER_VERSION
            if changed or store.get_meta("last_full_walk") is None:
                meta["last_full_walk"] = str(now)
    meta = {k: v for k, v in meta.items() if store.get_meta(k) != v}
    if stored_failures != set(failures) or meta:
        with store.transaction():
            store.clear_failures([p for p, _k, _r in stored_failures])
            for rel, kind, reason in failures:
                store.record_failure(rel, kind, reason, now)
            for key, value in meta.items():
                store.set_meta(key, value)
        changed = True
    report.failed = [{"path": p, "reason": r} for p, k, r in failures if k == "failed"]
    report.warnings.extend({"path": p, "message": r} for p, k, r in failures if k == "warning")
    if embedder is None or not store.vec_available:
        report.keyword_only = True
    elif not report.interrupted:
        pending = store.counts()["pending_vectors"]
        same_model = weights_id is not None and stored_id == weights_id  # the parse above kept the space
        emb = None if (pending == 0 and same_model and store.has_vec_tables()) else embedder()
        if emb is None and not (pending == 0 and same_model):
            report.keyword_only = True
        elif emb is not None:
            embedded, reused = embed_pending(store, emb, progress=progress, should_stop=stop)
            report.vectors_embedded += embedded
            report.vectors_reused += reused
            report.interrupted = report.interrupted or stop()
    report.seconds = round(time.monotonic() - started, 3)
    if not parse_interrupted and (changed or report.vectors_embedded or report.vectors_reused
                                  or store.get_meta("last_run_at") is None):
        with store.transaction():
            store.set_meta("last_run_at", str(now))
            store.set_meta("last_run_seconds", str(report.seconds))
    return report.freeze()


def index_file(
    store: Store,
    entry: WalkEntry,
    old: StoredDocument | None,
    report: RunTally,
    failures: list[tuple[str, str, str]],
    *,
    force: bool = False,
    reuse_vectors: bool = True,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> None:
    """Bring one file's document up to date (keyword index; vectors are embedded later).
    ``reuse_vectors=False`` leaves every passage of a rewritten document without a vector (the
    stored ones belong to another model build and are about to be replaced).

    ``old`` is the stored ``StoredDocument(id, sha256, (size, mtime_ns, ctime_ns))`` or None. A file over
    ``max_file_bytes`` is refused (its stored document removed) without being opened. An unchanged
    stat signature skips reading; an unchanged sha256 only updates the stat fields. Counts go to ``report``,
    problems to ``failures`` as ``(path, "failed", reason)``. Never raises for a bad file.
    """
    too_large = entry.size > max_file_bytes  # judged before anything else: a lowered limit applies at once
    if not too_large and old is not None and not force and old.signature == entry.signature:
        report.unchanged += 1
        report.warnings.extend({"path": entry.rel, "message": w} for w in store.document_warnings(entry.rel))
        return
    try:
        if too_large:  # not even opened: a huge file costs a stat per run
            raise FileRefused(messages.file_too_large(entry.size, max_file_bytes))
        data, text, decode_warning = read_markdown(entry, max_file_bytes)
    except FileRefused as exc:
        failures.append((entry.rel, "failed", str(exc)))
        if old is not None:  # never serve the old text of a file we can no longer read
            with store.transaction():
                store.delete_document(old.id)
            report.removed += 1
        return
    if old is not None and not force and hashlib.sha256(data).hexdigest() == old.sha256:
        with store.transaction():
            store.touch_document(old.id, entry.signature)
        report.unchanged += 1
        report.warnings.extend({"path": entry.rel, "message": w} for w in store.document_warnings(entry.rel))
        return
    warnings = [decode_warning] if decode_warning else []
    try:
        secs, pas, reused = write_document(
            store, entry.rel, data, text, entry.signature, warnings, old.id if old else None,
            reuse_vectors=reuse_vectors,
        )
    except Exception as exc:  # a parser bug must not stop the run
        if is_disk_full(exc, store.path):
            raise  # not this file's fault: the run stops, keeping every document written so far
        log.exception("failed to index %s", entry.rel)
        failures.append((entry.rel, "failed", f"internal error while indexing: {exc}"))
        return
    report.sections += secs
    report.passages += pas
    report.vectors_reused += reused
    if old is None:
        report.added += 1
    else:
        report.updated += 1
    for w in store.document_warnings(entry.rel):
        if w not in warnings:
            warnings.append(w)
    for w in warnings:
        report.warnings.append({"path": entry.rel, "message": w})


def refresh_paths(store: Store, root: Path, paths: list[str], exclude: list[str] | None = None,
                  max_file_bytes: int = MAX_FILE_BYTES) -> IndexReport:
    """Re-check specific documents now (edited, deleted, unreadable or new files), keyword
    index only: their passages get vectors in the next index run (passages whose text did not
    change keep their vectors at once). ``paths`` are POSIX paths relative to ``root``.

    A path that is gone, ignored, or no longer a regular Markdown file is purged. Failures are
    recorded like an index run's. Takes milliseconds per file; never raises for a bad file.
    """
    started = time.monotonic()
    report = RunTally(root=str(root))
    known = store.documents_by_path()
    failures: list[tuple[str, str, str]] = []
    paths = [p for p in paths if name_is_text(p)]  # never indexed (walk.py); SQLite refuses them
    for rel in dict.fromkeys(paths):
        entry = walk_one(root, rel, exclude)
        old = known.get(rel)
        report.scanned += 1
        if isinstance(entry, str):
            if old is not None:
                with store.transaction():
                    store.delete_document(old.id)
                report.removed += 1
            if entry:
                failures.append((rel, "failed", entry))
            continue
        index_file(store, entry, old, report, failures, max_file_bytes=max_file_bytes)
    if report.added or report.updated or report.removed:
        relink(store)
    with store.transaction():
        store.clear_failures(list(dict.fromkeys(paths)))
        now = time.time()
        for rel, kind, reason in failures:
            store.record_failure(rel, kind, reason, now)
    report.failed = [{"path": p, "reason": r} for p, _k, r in failures]
    report.seconds = round(time.monotonic() - started, 3)
    return report.freeze()


def _under_failed_dir(path: str, problems: list[tuple[str, str]]) -> bool:
    """A file under a directory we could not list is not known to be deleted: keep it."""
    return any(path.startswith(rel + "/") for rel, _ in problems)


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[int, int]:
    """Embed every passage without a vector. Returns (passages given a freshly computed vector,
    passages given the stored vector of an identical key elsewhere).

    Runs of adjacent small passages of one section (``passages.pack_runs``) are embedded as one
    text, ``"{breadcrumb}\n{part}\n{part}..."`` (code by its head, ``passages.embed_body``), and
    every member gets that vector; their ``embed_key`` is the key of the run's text (see
    :func:`passage_keys`; re-keyed here when a pending subset packs differently), so identical
    runs elsewhere (copied READMEs, moved files) reuse it. A section is at most
    ``passages.MAX_EMBED_TEXTS`` texts of at most ``MAX_PASSAGE_CHARS`` characters (``run_text``).
    Texts are embedded in order of
    length, in chunks of ``EMBED_CHUNK``, ``EMBED_WORKERS`` chunks in flight, each written in
    its own transaction by the calling thread; ``should_stop`` is polled between chunks (a chunk
    already running finishes in the background and is dropped). Section vectors are computed
    once, when a section's last pending passage lands. The model input count is logged at INFO.
    """
    stop = should_stop or (lambda: False)
    with store.transaction():
        store.ensure_vector_space(embedder.weights_id, embedder.dimension)
    rows = store.pending_passages()
    by_key: dict[str, list[tuple[int, int]]] = {}
    texts: dict[str, str] = {}
    own: dict[str, int] = {}  # passages of the first run with a key: fresh vectors, not reuse
    rekey: list[tuple[str, int]] = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end].section_id == rows[start].section_id:
            end += 1
        section = rows[start:end]
        first = section[0]
        sid = first.section_id
        title = embedding_title(first.doc_title, first.base_path, first.level)
        for group in pack_runs([(r.kind, r.text, r.start_line, r.end_line) for r in section]):
            members = [section[i] for i in group]
            text = run_text([embed_body(r.kind, r.text) for r in members])
            key = embed_key(title, text)
            for r in members:
                by_key.setdefault(key, []).append((r.id, sid))
                if r.embed_key != key:
                    rekey.append((key, r.id))
            if key not in texts:
                texts[key] = embedder.document_text(title, text)
                own[key] = len(members)
        start = end
    del rows
    if rekey:
        with store.transaction():
            store.set_embed_keys(rekey)
    # Reuse vectors of identical keys already embedded elsewhere.
    reuse: dict[int, tuple[int, bytes]] = {}
    for pid, sid, key, blob in store.reusable_vectors():
        reuse.setdefault(pid, (sid, blob))
        texts.pop(key, None)
    reused = len(reuse)
    # Pending passages per section: a section vector is computed once, when its last one lands.
    remaining: dict[int, int] = {}
    for owners in by_key.values():
        for _, sid in owners:
            remaining[sid] = remaining.get(sid, 0) + 1
    if reuse:
        with store.transaction():
            store.attach_vectors([(pid, blob) for pid, (_, blob) in reuse.items()])
            store.refresh_section_vectors(_completed(remaining, [sid for sid, _ in reuse.values()]))
    keys = sorted(texts, key=lambda k: len(texts[k]))
    total = len(keys)
    embedded = calls = 0
    chunks = iter(range(0, total, EMBED_CHUNK))
    workers = max(1, min(EMBED_WORKERS, os.cpu_count() or 1))
    pool = ThreadPoolExecutor(workers, thread_name_prefix="embed") if workers > 1 else None
    inflight: deque[tuple[int, list[str], Future | None]] = deque()

    def submit() -> None:
        start = next(chunks, None)
        if start is None or stop():
            return
        chunk = keys[start : start + EMBED_CHUNK]
        batch = [texts[k] for k in chunk]
        inflight.append((start, chunk, pool.submit(embedder.embed_texts, batch) if pool else None))

    try:
        for _ in range(workers):
            submit()
        while inflight:
            start, chunk, future = inflight.popleft()
            vectors = future.result() if future else embedder.embed_texts([texts[k] for k in chunk])
            submit()  # keep the model busy while this chunk is written
            pairs: list[tuple[int, bytes]] = []
            sids: list[int] = []
            for key, vec in zip(chunk, vectors):
                blob = vector_blob(vec)
                for pid, sid in by_key[key]:
                    pairs.append((pid, blob))
                    sids.append(sid)
            with store.transaction():
                store.attach_vectors(pairs)
                store.refresh_section_vectors(_completed(remaining, sids))
            calls += len(chunk)
            fresh = sum(own[k] for k in chunk)
            embedded += fresh
            reused += len(pairs) - fresh
            if progress:
                progress("embed", min(start + EMBED_CHUNK, total), total)
            if stop():
                break
    finally:
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)
    log.info("embedded %d texts for %d passages (%d reused)", calls, embedded, reused)
    return embedded, reused


def _completed(remaining: dict[int, int], sids: list[int]) -> list[int]:
    """Count one landed passage vector per entry of ``sids`` (section ids) against
    ``remaining``; returns the sections that now have no pending passage left."""
    done = []
    for sid in sids:
        left = remaining.get(sid, 0) - 1
        remaining[sid] = left
        if left == 0:
            done.append(sid)
    return done
