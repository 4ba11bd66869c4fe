"""Vectors: the vec0 tables ``vec_passages`` / ``vec_sections`` (rowid = passage / section id,
float32, cosine distance), the embedder they belong to (``meta``: ``weights_id``,
``dimension``), and nearest-neighbour search over passage vectors.

Writes: ``ensure_vector_space`` (drops vectors of another model), ``attach_vectors``,
``refresh_section_vectors`` (a section's vector = normalised mean of its passages'), and the
reuse queries of the indexer (``old_vectors``, ``reusable_vectors``).

KNN (``knn``): sqlite-vec's ``vec0`` scan, or a ``VectorCache``. ``vec0`` answers a KNN by
scanning every stored vector inside SQLite: ~20 ms for 38k 384-d vectors here, ~0.3 s for
612k (16x the eval corpus). A process that answers many queries (the MCP server) instead keeps
the vectors quantized in memory (``quantized.QuantizedVectors``: int8 codes and sign bits,
``cache_bytes`` = rows x (dimension + dimension / 8 + 12) bytes: 17 MB for the eval corpus,
272 MB at 16x, instead of 59 MB / 940 MB as float32) and answers from them in a few ms, with
cosines within ~0.002 of exact. The ``vec0``
table stays the source of truth: the matrix is reloaded when the stored vectors change
(checked per query with one cheap query), at most every ``RELOAD_SECONDS`` while an index run
keeps changing them; in between, queries fall back to ``vec0``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import schema
from .common import bound_chunks, delete_rowids, marks
from .errors import is_duplicate_key
from .quantized import QuantizedVectors

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Store

#: Minimum seconds between two reloads of a VectorCache's matrix while the vectors keep changing.
RELOAD_SECONDS = 30.0
#: Above this many bytes the matrix is not cached (queries use ``vec0``).
MAX_CACHE_BYTES = 512 * 1024 * 1024


def vector_blob(vector: np.ndarray) -> bytes:
    """float32 little-endian bytes, the format vec0 expects."""
    return np.asarray(vector, dtype="<f4").tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    """The float32 vector [d] of a vec0 blob (read-only view)."""
    return np.frombuffer(blob, dtype="<f4")


class ReusableVector(NamedTuple):
    """A pending passage whose ``embed_key`` some embedded passage shares, with that vector."""

    passage_id: int
    section_id: int
    embed_key: str
    embedding: bytes


# -- the vector space -------------------------------------------------------------------------
def has_vec_tables(store: Store) -> bool:
    """True when the vec0 tables exist (see ``schema.has_vector_tables``)."""
    return schema.has_vector_tables(store)


def vector_space(store: Store) -> tuple[str | None, int | None]:
    """(weights_id, dimension) of the stored vectors, or (None, None)."""
    wid = store.get_meta("weights_id")
    dim = store.get_meta("dimension")
    return wid, (int(dim) if dim else None)


def ensure_vector_space(store: Store, weights_id: str, dimension: int) -> bool:
    """Make the vec tables belong to ``weights_id``. Drops vectors of another model (they are
    never compared across models) and marks every passage pending. Returns True when the
    space was (re)created. Must run inside a transaction; requires vec_available."""
    current, dim = vector_space(store)
    if current == weights_id and dim == dimension and has_vec_tables(store):
        return False
    schema.create_vector_tables(store, dimension)
    store.conn.execute("UPDATE passages SET has_vector = 0 WHERE has_vector != 0")
    store.set_meta("weights_id", weights_id)
    store.set_meta("dimension", str(dimension))
    return True


# -- writes and reuse (indexer) ---------------------------------------------------------------
def old_vectors(store: Store, doc_id: int) -> dict[str, bytes]:
    """``{embed_key: vector blob}`` of a document's embedded passages (reused on rewrite)."""
    if not (store.vec_available and has_vec_tables(store)):
        return {}
    rows = store.conn.execute(
        "SELECT p.embed_key, v.embedding FROM passages p JOIN vec_passages v ON v.rowid = p.id "
        "WHERE p.doc_id = ? AND p.has_vector = 1",
        (doc_id,),
    )
    return {r[0]: r[1] for r in rows}


def reusable_vectors(store: Store) -> list[ReusableVector]:
    """Pending passages whose ``embed_key`` an embedded passage shares, each with that vector
    (a passage may appear once per such passage; the first is as good as any)."""
    rows = store.conn.execute(
        "SELECT p.id, p.section_id, p.embed_key, v.embedding FROM passages p "
        "JOIN passages q ON q.embed_key = p.embed_key AND q.has_vector = 1 "
        "JOIN vec_passages v ON v.rowid = q.id WHERE p.has_vector = 0"
    ).fetchall()
    return [ReusableVector(*r) for r in rows]


def attach_vectors(store: Store, pairs: Sequence[tuple[int, bytes]]) -> None:
    """Store passage vectors ``[(passage_id, float32 blob)]`` and mark them embedded. A
    passage that still has a vector row (marked pending again) gets it replaced: vec0 ignores
    ``INSERT OR REPLACE`` and would fail the whole run on the duplicate rowid, so on that
    error the batch's rows are deleted and inserted again (no extra cost otherwise). Call
    inside a transaction."""
    if not pairs:
        return
    sql = "INSERT INTO vec_passages(rowid, embedding) VALUES (?, ?)"
    try:
        store.conn.executemany(sql, pairs)
    except store.driver.module.DatabaseError as exc:  # OperationalError or IntegrityError by driver
        if not is_duplicate_key(exc):
            raise
        delete_rowids(store, "vec_passages", [pid for pid, _ in pairs])
        store.conn.executemany(sql, pairs)
    if schema.has_exact_table(store):  # the same vectors, for the exact distances of a shortlist
        store.conn.executemany(f"INSERT OR REPLACE INTO {schema.EXACT_TABLE}(id, embedding) VALUES (?, ?)", pairs)
    store.conn.executemany("UPDATE passages SET has_vector = 1 WHERE id = ?", [(pid,) for pid, _ in pairs])


def refresh_section_vectors(store: Store, section_ids: Iterable[int],
                            sums: Mapping[int, tuple[np.ndarray, int]] | None = None) -> int:
    """Section vector = L2-normalised mean of its passage vectors, for sections whose passages
    are all embedded. Returns how many section vectors were written. Call inside a transaction.

    ``sums``: ``{section id: (sum of float32 passage vectors, how many)}`` the caller already
    holds (the indexer, for the vectors it just computed); a section whose passages all have a
    vector and number that many takes its mean from there, without reading ``vec_passages``
    back (a vec0 point read per passage was ~9% of an index run's CPU). Others are read back."""
    wanted = sorted(set(section_ids))
    if not wanted:
        return 0
    sums = sums or {}
    counts: dict[int, tuple[int, int]] = {}
    existing: set[int] = set()
    for chunk in bound_chunks(wanted):
        q = marks(len(chunk))
        for sid, total, embedded in store.conn.execute(
            f"SELECT section_id, count(*), sum(has_vector) FROM passages WHERE section_id IN ({q}) GROUP BY section_id",
            list(chunk),
        ):
            counts[sid] = (total, embedded)
        existing.update(r[0] for r in store.conn.execute(
            f"SELECT rowid FROM vec_sections_rowids WHERE rowid IN ({q})", list(chunk)))
    means: list[tuple[int, bytes]] = []
    for sid in wanted:
        total, embedded = counts.get(sid, (0, 0))
        if not total or embedded != total:
            continue
        held = sums.get(sid)
        if held is not None and held[1] == total:
            mean = held[0] / total
        else:
            rows = store.conn.execute(
                "SELECT v.embedding FROM passages p JOIN vec_passages v ON v.rowid = p.id WHERE p.section_id = ?",
                (sid,),
            ).fetchall()
            if len(rows) != total:
                continue
            mean = np.mean([blob_vector(r[0]) for r in rows], axis=0)
        norm = float(np.linalg.norm(mean)) or 1.0
        means.append((sid, vector_blob(mean / norm)))
    stale = [sid for sid, _ in means if sid in existing]
    if stale:
        delete_rowids(store, "vec_sections", stale)
    store.conn.executemany("INSERT INTO vec_sections(rowid, embedding) VALUES (?, ?)", means)
    return len(means)


# -- nearest neighbours -----------------------------------------------------------------------
@dataclass
class _Matrix:
    token: tuple[object, ...]
    vectors: QuantizedVectors  # int8 codes + sign bits of the passage vectors (see quantized.py)
    loaded_at: float

    @property
    def ids(self) -> np.ndarray:
        """int64 [n] passage ids, in row order."""
        return self.vectors.ids


def vector_token(store: Store) -> tuple[object, ...]:
    """Changes whenever passage vectors are added, deleted or replaced by another model's:
    ``(database path, weights_id, vector count, highest rowid)``."""
    count, top = store.versioned("vector_token", lambda: store.conn.execute(
        "SELECT count(*), max(rowid) FROM vec_passages_rowids").fetchone())  # reused until the database changes
    return (str(store.path), store.get_meta("weights_id"), count, top)


def cache_bytes(count: int, dimension: int) -> int:
    """Bytes a ``VectorCache`` holds for ``count`` vectors of ``dimension`` (see quantized.py)."""
    return count * (dimension + (dimension + 63) // 64 * 8 + 12)


#: Vectors read per batch while loading a cache (bounds the float32 copy alive at once).
LOAD_BATCH = 8192


def _stored_batches(store: Store, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(ids int64 [m], vectors float32 [m, d])`` batches of every stored passage vector,
    through ``vec0``'s own query (~25 us a vector)."""
    cur = store.conn.execute("SELECT rowid, embedding FROM vec_passages")
    while rows := cur.fetchmany(LOAD_BATCH):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)


#: The chunk tables' rows, in storage order (see ``_chunk_batches`` for why unordered).
CHUNKS_SQL = ("SELECT c.size, c.validity, c.rowids, v.vectors FROM vec_passages_chunks c "
              "JOIN vec_passages_vector_chunks00 v ON v.rowid = c.chunk_id")


def _chunk_batches(store: Store, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The same batches read from sqlite-vec's chunk tables (one row per 1,024 vectors: ~10x
    faster than ``_stored_batches``): ``validity`` bitmap (bit i, least significant first), ``rowids``
    int64 [size] and ``vectors`` float32 [size x d] of each chunk. Raises ValueError when a
    chunk does not have that layout (another sqlite-vec version): the caller falls back. No
    ORDER BY: SQLite sorted the joined rows in a temporary b-tree holding every blob (1,060 MB
    peak, ~470 MB kept by the loading thread's allocator, at 16x the eval corpus; 420 MB without)."""
    rows = store.conn.execute(CHUNKS_SQL)
    for size, validity, rowids, blob in rows:
        if len(rowids) != size * 8 or len(blob) != size * dim * 4 or len(validity) * 8 < size:
            raise ValueError("unexpected vec0 chunk layout")
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size].astype(bool)
        if valid.any():
            ids = np.frombuffer(rowids, dtype="<i8")[valid]
            yield ids, np.frombuffer(blob, dtype="<f4").reshape(size, dim)[valid]


def load_quantized(store: Store, dim: int, count: int) -> QuantizedVectors:
    """Every stored passage vector, quantized (``count``: how many ``vector_token`` saw; the
    result has as many rows as were read). Reads the chunk tables, or ``vec0`` when their layout
    is not the expected one or their vectors do not add up to ``count``."""
    for batches in (_chunk_batches, _stored_batches):
        out = QuantizedVectors.empty(count, dim)
        filled = 0
        try:
            for ids, vectors in batches(store, dim):
                if filled + len(ids) > count:
                    raise ValueError("more vectors than counted")
                out.put(filled, ids, vectors)
                filled += len(ids)
        except (ValueError, store.driver.module.OperationalError):
            if batches is _stored_batches:
                raise
            del out  # freed before the next attempt allocates its arrays
            continue
        if filled == count or batches is _stored_batches:
            return out.truncate(filled)
        del out
    raise AssertionError("unreachable")  # pragma: no cover


class VectorCache:
    """One database's passage vectors held quantized in memory (``quantized.QuantizedVectors``:
    int8 codes + sign bits, ``cache_bytes`` = n x (d + d/8 + 12) bytes), for ``knn`` in a
    long-lived process (the MCP server); a one-shot CLI query is faster through ``vec0`` than
    loading the matrix, so it passes no cache. Thread-safe: the connections of several
    threads to the same database may share one cache. Reloaded (from any of them) when the
    vectors changed (``vector_token``), at most every ``reload_seconds`` while they keep
    changing; not kept when the matrix would exceed ``max_bytes``. A store of another database
    replaces the matrix."""

    def __init__(self, *, reload_seconds: float = RELOAD_SECONDS, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.reload_seconds = reload_seconds
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._matrix: _Matrix | None = None

    def clear(self) -> None:
        """Drop the matrix (the next query reloads it)."""
        with self._lock:
            self._matrix = None

    def matrix(self, store: Store) -> _Matrix | None:
        """The current matrix for ``store``'s vectors, loading it when due; None when ``vec0``
        must answer (the vectors are changing and a reload is not due yet, or they are too many)."""
        token = vector_token(store)
        with self._lock:
            matrix = self._matrix
            if matrix is None or matrix.token != token:
                if (matrix is not None and matrix.token[0] == token[0]
                        and time.monotonic() - matrix.loaded_at < self.reload_seconds):
                    return None  # still changing: vec0 answers until the next reload is due
                self._matrix = None  # the old one is freed before the new one is built
                matrix = self._load(store, token)
                self._matrix = matrix
            return matrix

    def _load(self, store: Store, token: tuple[object, ...]) -> _Matrix | None:
        dim = store.get_meta("dimension")
        count = int(token[2] or 0)  # type: ignore[call-overload]
        if not dim or not count or cache_bytes(count, int(dim)) > self.max_bytes:
            return None
        return _Matrix(token, load_quantized(store, int(dim), count), time.monotonic())


def _vec0_knn(store: Store, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
    rows = store.conn.execute(
        "SELECT rowid, distance FROM vec_passages WHERE embedding MATCH ? AND k = ?", (vector_blob(qvec), k)
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def _vec0_knn_among(store: Store, qvec: np.ndarray, k: int, allowed: np.ndarray) -> list[tuple[int, float]] | None:
    """vec0's KNN restricted to the rowids ``allowed`` (one JSON array bound; sqlite-vec >= 0.1.6
    takes ``rowid IN`` inside a KNN query: 0.24 s for 22k of 38k rows here, where reading those
    vectors by rowid took 10 s), or None when this sqlite-vec refuses the constraint."""
    import json

    try:
        rows = store.conn.execute(
            "SELECT rowid, distance FROM vec_passages WHERE embedding MATCH ? AND k = ? "
            "AND rowid IN (SELECT value FROM json_each(?))",
            (vector_blob(qvec), k, json.dumps([int(i) for i in allowed])),
        ).fetchall()
    except store.driver.module.OperationalError:
        return None
    return [(int(r[0]), float(r[1])) for r in rows]


def _allowed_vectors(store: Store, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids [n], vectors [n, d]) of the stored passage vectors whose ids are in ``allowed``
    (slow: vec0 reads by rowid one at a time; only for a sqlite-vec without ``rowid IN``)."""
    ids: list[int] = []
    blobs: list[bytes] = []
    for chunk in bound_chunks([int(i) for i in allowed]):
        for rowid, blob in store.conn.execute(
                f"SELECT rowid, embedding FROM vec_passages WHERE rowid IN ({marks(len(chunk))})", list(chunk)):
            ids.append(int(rowid))
            blobs.append(blob)
    dim = int(store.get_meta("dimension") or 0)
    return np.asarray(ids, dtype=np.int64), np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dim)


def _exact_among(store: Store, qvec: np.ndarray, k: int, shortlist: np.ndarray) -> list[tuple[int, float]] | None:
    """The ``k`` nearest of the passages ``shortlist`` with their exact distances, as
    ``_vec0_knn_among`` gives them, read from the plain copy ``vec_passages_exact`` by rowid
    (sqlite-vec's own ``vec_distance_cosine``, the function vec0's KNN uses: the same figures;
    ~360 B-tree reads of 1.5 KB, where vec0 reads a 1,024-vector chunk per row). None (the
    caller asks vec0) when the copy is missing or lacks a shortlisted vector. Equal distances
    (duplicate passages) are ordered as vec0 orders them (``_vec0_places``)."""
    if not schema.has_exact_table(store):
        return None
    ids = [int(i) for i in shortlist]
    qblob = vector_blob(qvec)
    found: list[tuple[float, int]] = []
    for chunk in bound_chunks(ids):
        found.extend((float(r[1]), int(r[0])) for r in store.conn.execute(
            f"SELECT id, vec_distance_cosine(embedding, ?) FROM {schema.EXACT_TABLE} WHERE id IN ({marks(len(chunk))})",
            [qblob, *chunk]))
    if len(found) != len(set(ids)):
        return None
    found.sort()
    decided = found[:k + 1]  # the k kept, their order, and the first one left out
    if any(a[0] == b[0] for a, b in zip(decided, decided[1:])):
        place = _vec0_places(store, ids)
        if place is None or len(place) != len(found):
            return None
        found.sort(key=lambda f: (f[0], *place[f[1]]))
    return [(pid, dist) for dist, pid in found[:k]]


def _vec0_places(store: Store, ids: Sequence[int]) -> dict[int, tuple[int, int]] | None:
    """``{rowid: (chunk_id, -chunk_offset)}``: vec0's order among equal distances (sqlite-vec
    0.1.9 scans its chunks by ``chunk_id``; within a chunk its top-k selection takes the
    highest offset first, ``min_idx``'s ``<=``; merging keeps an earlier chunk's row first), or
    None when the rowids table does not have that layout (another sqlite-vec version)."""
    place: dict[int, tuple[int, int]] = {}
    try:
        for chunk in bound_chunks(list(ids)):
            for rowid, chunk_id, offset in store.conn.execute(
                    f"SELECT rowid, chunk_id, chunk_offset FROM vec_passages_rowids WHERE rowid IN ({marks(len(chunk))})",
                    list(chunk)):
                place[int(rowid)] = (int(chunk_id), -int(offset))
    except store.driver.module.OperationalError:
        return None
    return place


#: Extra quantized neighbours (at least this many, else ``k`` more) whose exact distances are
#: computed, so a neighbour the int8 cosines (error ~0.002) put just past ``k`` still competes.
EXACT_MARGIN_MIN = 32


def knn(store: Store, qvec: np.ndarray, k: int, cache: VectorCache | None = None,
        allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``k`` nearest passage vectors to ``qvec`` (float32 [d], L2-normalised) as
    ``[(passage_id, cosine distance)]``, nearest first: through ``cache``'s quantized vectors
    when it has them for these vectors (cosines within ~0.002 of exact, see quantized.py) as a
    shortlist of ``k + max(EXACT_MARGIN_MIN, k)`` whose exact distances vec0 then gives (the
    same neighbours and distances as without the cache), else sqlite-vec's exact ``vec0`` scan. ``allowed`` (int64 passage ids, a search filter's
    candidate set, ``scope.allowed_passages``): only those passages compete, so a filter never
    empties the top ``k`` (over the cache a row mask of the quantized search). Requires the
    vec tables."""
    matrix = cache.matrix(store) if cache is not None else None
    if matrix is not None and len(matrix.ids):
        mask = None if allowed is None else np.isin(matrix.ids, allowed)
        near = matrix.vectors.search(qvec, k + max(EXACT_MARGIN_MIN, k), mask)
        # One engine, one answer: the quantized cosines only shortlist; the distances (and so
        # the order and the k kept) are vec0's exact ones, as a process without the cache gets.
        shortlist = np.asarray([pid for pid, _d in near], dtype=np.int64)
        exact = _exact_among(store, qvec, k, shortlist) if near else []
        if exact is None:
            exact = _vec0_knn_among(store, qvec, k, shortlist)
        return near[:k] if exact is None else exact
    if allowed is None:
        return _vec0_knn(store, qvec, k)
    if len(allowed) == 0 or k <= 0:
        return []
    found = _vec0_knn_among(store, qvec, k, allowed)
    if found is not None:
        return found
    ids, vectors = _allowed_vectors(store, allowed)
    if len(ids) == 0 or k <= 0:
        return []
    sims = vectors @ np.asarray(qvec, dtype=np.float32)
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.argsort(-sims[top])]
    return [(int(ids[i]), float(1.0 - sims[i])) for i in top]
