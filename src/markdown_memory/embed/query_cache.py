"""A small LRU of query vectors, so a repeated query is not embedded again.

An agent often sends the same query twice in one session (a retry, a follow-up with another
``top_k`` or path prefix), and with the default model a query embedding is the largest part
of a hybrid search's time (docs/performance.md, "The default model's cost"). The cache is
keyed by ``(weights_id, query text)``: vectors of another model or build are never returned.
It holds at most :data:`QUERY_CACHE_SIZE` vectors (768 float32 = 3 KB each); the least
recently used one goes first. The stored arrays are read-only, so no caller can change a
vector another search gets later. Thread-safe (the MCP server answers calls on worker threads).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .base import Embedder

#: Query vectors kept per process and docs root (at 768 dims, ~0.8 MB).
QUERY_CACHE_SIZE = 256


class QueryVectorCache:
    """``vector(embedder, query)``: the embedder's query vector, computed once per key."""

    def __init__(self, capacity: int = QUERY_CACHE_SIZE) -> None:
        self.capacity = max(0, int(capacity))
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def vector(self, embedder: Embedder, query: str) -> np.ndarray:
        """float32 ``[dimension]`` unit vector of ``query`` (read-only array); embeds on a miss
        (outside the lock: two threads missing the same key both embed, the vectors are equal)."""
        key = (embedder.weights_id, query)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
        vec = np.array(embedder.embed_query(query), dtype=np.float32)
        vec.setflags(write=False)
        if self.capacity:
            with self._lock:
                self._items[key] = vec
                self._items.move_to_end(key)
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
        return vec
