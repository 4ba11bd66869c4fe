"""The embedding phase of an index run: passage embedding keys (what identifies a passage's
embedding input, so identical inputs anywhere share one vector), the reuse of stored vectors for
moved or copied text, and :func:`embed_pending`, which embeds every passage still without a
vector in length-sorted chunks, a few calls in flight, each chunk written in its own transaction.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..embed.base import Embedder, batch_order_lengths
from ..embed.onnx_runtime import CALLS_IN_FLIGHT
from ..markdown import ParsedDocument
from ..markdown.passages import embed_body, pack_runs, run_text
from ..store import blob_vector, vector_blob
from ..store.views import IndexWrites

log = logging.getLogger("markdown_memory.indexer")

Progress = Callable[[str, int, int], None]  # (phase, done, total)

#: Texts embedded and written per transaction (also the stop granularity: < 1 s).
EMBED_CHUNK = 64
#: Chunks embedded at once (threads calling the model). With small length-sorted batches one
#: onnxruntime call keeps ~1 of 2 cores busy; two calls in flight measured 1.15-1.5x the tokens/s
#: on 2 cores (README.md, "Performance"). The main thread writes while the model runs.
EMBED_WORKERS = CALLS_IN_FLIGHT  # 2


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


def reuse_identical_vectors(store: IndexWrites) -> int:
    """Give every passage without a vector the stored vector of an embedded passage with the
    same ``embed_key`` (same breadcrumb and text: a moved, renamed or copied file). Returns how
    many passages got one. Needs the vec tables of the current model (a no-op without them)."""
    if not (store.vec_available and store.has_vec_tables()):
        return 0
    reuse: dict[int, tuple[int, bytes]] = {}
    for pid, sid, _key, blob in store.reusable_vectors():
        reuse.setdefault(pid, (sid, blob))
    if reuse:
        with store.transaction():
            store.attach_vectors([(pid, blob) for pid, (_, blob) in reuse.items()])
            store.refresh_section_vectors({sid for sid, _ in reuse.values()})
    return len(reuse)


def embed_pending(
    store: IndexWrites,
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
    Texts are embedded in order of length (the model's token counts when it offers
    ``sort_lengths``, else characters), in chunks of ``EMBED_CHUNK``, ``EMBED_WORKERS`` chunks in
    flight, each written in its own transaction by the calling thread; ``should_stop`` is polled between chunks (a chunk
    already running finishes in the background and is dropped). Section vectors are computed
    once, when a section's last pending passage lands. ``progress("embed", done, total)`` counts
    passages given a fresh vector (the first return value; several share one text when packed), not
    model inputs, whose count is logged at INFO.
    """
    stop = should_stop or (lambda: False)
    with store.transaction():
        store.ensure_vector_space(embedder.weights_id, embedder.dimension)
    pending = _pending_texts(store, embedder)
    if pending.rekey:
        with store.transaction():
            store.set_embed_keys(pending.rekey)
    # Pending passages per section: a section vector is computed once, when its last one lands.
    remaining: dict[int, int] = {}
    for owners in pending.by_key.values():
        for _, sid in owners:
            remaining[sid] = remaining.get(sid, 0) + 1
    # running sums of the vectors landing per section: its mean without reading them back
    sums: dict[int, tuple[np.ndarray, int]] = {}
    reused = _reuse_identical(store, pending, remaining, sums)
    keys = list(pending.texts)
    lengths = batch_order_lengths(embedder, [pending.texts[k] for k in keys])
    keys = [keys[i] for i in sorted(range(len(keys)), key=lengths.__getitem__)]
    run = _ChunkRun(store, embedder, pending, remaining, sums, progress, stop)
    embedded, shared, calls = run.embed(keys)
    reused += shared
    log.info("embedded %d texts for %d passages (%d reused)", calls, embedded, reused)
    return embedded, reused


@dataclass
class _Pending:
    """The passages without a vector, by embedding key: ``by_key`` key -> [(passage id, section
    id)], ``texts`` key -> the document text to embed, ``own`` key -> passages of the first run
    with that key (fresh vectors, not reuse), ``rekey`` [(key, passage id)] whose stored key
    differs (a pending subset packed differently)."""

    by_key: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    own: dict[str, int] = field(default_factory=dict)
    rekey: list[tuple[str, int]] = field(default_factory=list)


def _pending_texts(store: IndexWrites, embedder: Embedder) -> _Pending:
    """The pending passages packed into runs (``pack_runs``) per section, keyed (see
    :func:`embed_pending`)."""
    rows = store.pending_passages()
    pending = _Pending()
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
                pending.by_key.setdefault(key, []).append((r.id, sid))
                if r.embed_key != key:
                    pending.rekey.append((key, r.id))
            if key not in pending.texts:
                pending.texts[key] = embedder.document_text(title, text)
                pending.own[key] = len(members)
        start = end
    return pending


def _reuse_identical(store: IndexWrites, pending: _Pending, remaining: dict[int, int],
                     sums: dict[int, tuple[np.ndarray, int]]) -> int:
    """Give pending passages the stored vectors of identical keys embedded elsewhere (their
    keys leave ``pending.texts``); returns how many passages got one."""
    reuse: dict[int, tuple[int, bytes]] = {}
    for pid, sid, key, blob in store.reusable_vectors():
        reuse.setdefault(pid, (sid, blob))
        pending.texts.pop(key, None)
    if reuse:
        for sid, blob in reuse.values():
            _add(sums, sid, blob_vector(blob))
        with store.transaction():
            store.attach_vectors([(pid, blob) for pid, (_, blob) in reuse.items()])
            done = _completed(remaining, [sid for sid, _ in reuse.values()])
            store.refresh_section_vectors(done, sums)
        _forget(sums, done)
    return len(reuse)


@dataclass
class _ChunkRun:
    """Embeds the pending texts chunk by chunk (``EMBED_WORKERS`` chunks in flight) and writes
    each chunk in its own transaction (see :func:`embed_pending`)."""

    store: IndexWrites
    embedder: Embedder
    pending: _Pending
    remaining: dict[int, int]
    sums: dict[int, tuple[np.ndarray, int]]
    progress: Progress | None
    stop: Callable[[], bool]

    def embed(self, keys: list[str]) -> tuple[int, int, int]:
        """Embed the texts of ``keys`` in this order -> (passages given a fresh vector, passages
        given the vector of a text they share, texts embedded)."""
        texts, embedder = self.pending.texts, self.embedder
        goal = sum(self.pending.own[k] for k in keys)  # progress counts passages given a fresh vector
        embedded = shared = calls = 0
        chunks = iter(range(0, len(keys), EMBED_CHUNK))
        workers = max(1, min(EMBED_WORKERS, os.cpu_count() or 1))
        pool = ThreadPoolExecutor(workers, thread_name_prefix="embed") if workers > 1 else None
        inflight: deque[tuple[list[str], Future[np.ndarray] | None]] = deque()

        def submit() -> None:
            start = next(chunks, None)
            if start is None or self.stop():
                return
            chunk = keys[start : start + EMBED_CHUNK]
            batch = [texts[k] for k in chunk]
            inflight.append((chunk, pool.submit(embedder.embed_texts, batch) if pool else None))

        try:
            for _ in range(workers):
                submit()
            while inflight:
                chunk, future = inflight.popleft()
                vectors = future.result() if future else embedder.embed_texts([texts[k] for k in chunk])
                submit()  # keep the model busy while this chunk is written
                written = self._write(chunk, vectors)
                calls += len(chunk)
                fresh = sum(self.pending.own[k] for k in chunk)
                embedded += fresh
                shared += written - fresh
                if self.progress:
                    self.progress("embed", embedded, goal)
                if self.stop():
                    break
        finally:
            if pool:
                pool.shutdown(wait=False, cancel_futures=True)
        return embedded, shared, calls

    def _write(self, chunk: list[str], vectors: np.ndarray) -> int:
        """Store the vectors of one chunk's keys for every passage of each; returns how many."""
        pairs: list[tuple[int, bytes]] = []
        sids: list[int] = []
        for key, vec in zip(chunk, vectors):
            blob = vector_blob(vec)
            for pid, sid in self.pending.by_key[key]:
                pairs.append((pid, blob))
                sids.append(sid)
                _add(self.sums, sid, vec)
        with self.store.transaction():
            self.store.attach_vectors(pairs)
            done = _completed(self.remaining, sids)
            self.store.refresh_section_vectors(done, self.sums)
        _forget(self.sums, done)
        return len(pairs)


def _add(sums: dict[int, tuple[np.ndarray, int]], sid: int, vec: np.ndarray) -> None:
    """Add one passage vector to section ``sid``'s running (float32 sum, count)."""
    held = sums.get(sid)
    if held is None:
        sums[sid] = (np.array(vec, dtype=np.float32), 1)
    else:
        np.add(held[0], vec, out=held[0])
        sums[sid] = (held[0], held[1] + 1)


def _forget(sums: dict[int, tuple[np.ndarray, int]], sids: list[int]) -> None:
    for sid in sids:
        sums.pop(sid, None)


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
