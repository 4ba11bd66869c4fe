"""Passage-vector KNN: sqlite-vec's ``vec0`` scan, or an in-memory matrix in long-lived processes.

``vec0`` answers a KNN by scanning every stored vector inside SQLite: ~20 ms for 38k 384-d
vectors here. A process that answers many queries (the MCP server) can instead keep the same
vectors as one float32 matrix and score them with a single matrix-vector product (~1-2 ms;
the matrix costs ``rows x dimension x 4`` bytes of memory, 59 MB for that corpus, and ~0.3 s
to load). The ``vec0`` table stays the source of truth: the matrix is reloaded when the stored
vectors change (checked per query with one cheap query), at most every ``RELOAD_SECONDS``
while an index run keeps changing them; in between, queries fall back to ``vec0``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from ..store import Store, vector_blob

#: Minimum seconds between two reloads of the matrix while the vectors keep changing.
RELOAD_SECONDS = 30.0
#: Above this many bytes the matrix is not cached (queries use ``vec0``).
MAX_CACHE_BYTES = 512 * 1024 * 1024

_enabled = False
_lock = threading.Lock()
_cache: dict[str, "_Matrix"] = {}


@dataclass
class _Matrix:
    token: tuple[object, ...]
    ids: np.ndarray  # int64 [n] passage ids
    vectors: np.ndarray  # float32 [n, d], L2-normalised
    loaded_at: float


def enable_cache(enabled: bool = True) -> None:
    """Turn the in-memory matrix on (the MCP server does) or off (the default: a one-shot CLI
    query is faster through ``vec0`` than loading the matrix)."""
    global _enabled
    _enabled = enabled
    if not enabled:
        with _lock:
            _cache.clear()


def _token(store: Store) -> tuple[object, ...]:
    """Changes whenever vectors are added, deleted or replaced by another model's."""
    count, top = store.conn.execute("SELECT count(*), max(rowid) FROM vec_passages_rowids").fetchone()
    return (store.get_meta("weights_id"), count, top)


def _sql_knn(store: Store, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
    rows = store.conn.execute(
        "SELECT rowid, distance FROM vec_passages WHERE embedding MATCH ? AND k = ?", (vector_blob(qvec), k)
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def _load(store: Store, token: tuple[object, ...]) -> _Matrix | None:
    dim = store.get_meta("dimension")
    count = token[1]
    if not dim or not count or int(count) * int(dim) * 4 > MAX_CACHE_BYTES:
        return None
    rows = store.conn.execute("SELECT rowid, embedding FROM vec_passages").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), int(dim))
    return _Matrix(token, ids, vectors, time.monotonic())


def knn(store: Store, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest passage vectors to ``qvec`` (float32 [d], L2-normalised) as
    ``[(passage_id, cosine distance)]``, nearest first."""
    if not _enabled:
        return _sql_knn(store, qvec, k)
    key = str(store.path)
    token = _token(store)
    with _lock:
        matrix = _cache.get(key)
        if matrix is None or matrix.token != token:
            if matrix is not None and time.monotonic() - matrix.loaded_at < RELOAD_SECONDS:
                matrix = None  # still changing: vec0 answers until the next reload is due
            else:
                matrix = _load(store, token)
                if matrix is None:
                    _cache.pop(key, None)
                else:
                    _cache[key] = matrix
    if matrix is None or len(matrix.ids) == 0:
        return _sql_knn(store, qvec, k)
    sims = matrix.vectors @ np.asarray(qvec, dtype=np.float32)
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.argsort(-sims[top])]
    return [(int(matrix.ids[i]), float(1.0 - sims[i])) for i in top]
