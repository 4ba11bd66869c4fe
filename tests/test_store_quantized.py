"""The server's in-memory vectors (store.VectorCache) are int8 codes + sign bits: a quarter of
the float32 matrix's memory, with the same top-10 neighbours as exact KNN."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.store import VectorCache, knn
from markdown_memory.store import vectors as store_vectors
from markdown_memory.store.quantized import SHORTLIST_MIN, QuantizedVectors
from markdown_memory.store.testing import vector_rows

DIM = 384


def _model_like(rng: np.random.Generator, n: int, clusters: int) -> np.ndarray:
    """Unit vectors shaped like a sentence model's: a shared mean direction (every pair has a
    positive cosine), topic clusters, near-duplicate members (copies of a doc with a few words
    changed) and per-text noise."""
    mean = rng.normal(size=DIM)
    centres = rng.normal(size=(clusters, DIM)) * 0.7 + mean * 0.5
    out = centres[rng.integers(0, clusters, n)] + rng.normal(size=(n, DIM)) * 0.6
    dup = rng.random(n) < 0.3  # a third are near-copies of an earlier vector
    src = rng.integers(0, max(1, n // 2), n)
    out[dup] = out[src[dup]] + rng.normal(size=(int(dup.sum()), DIM)) * 0.05
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.astype(np.float32)


def _quantized(vectors: np.ndarray) -> QuantizedVectors:
    q = QuantizedVectors.empty(len(vectors), vectors.shape[1])
    q.put(0, np.arange(len(vectors), dtype=np.int64) + 1, vectors)
    return q


def _agreement(exact_sims: np.ndarray, found_ids: list[int], k: int, tie: float = 1e-6) -> float:
    """Share of the found top-k whose exact cosine reaches the exact k-th best (within ``tie``)."""
    kth = np.sort(exact_sims)[-k]
    return float(np.mean([exact_sims[i - 1] >= kth - tie for i in found_ids[:k]]))


@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(SHORTLIST_MIN + 1, 2 * SHORTLIST_MIN),
       clusters=st.integers(5, 400))
def test_quantized_top10_agrees_with_exact_knn(seed, n, clusters):
    rng = np.random.default_rng(seed)
    data = _model_like(rng, n, clusters)
    index = _quantized(data)
    queries = data[rng.integers(0, n, 10)] + rng.normal(size=(10, DIM)).astype(np.float32) * 0.03
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    agreement = []
    for q in queries:
        exact = data @ q
        found = index.search(q, 10)
        # near-copies closer than the codes' rounding (0.002) are ties: either may come first
        agreement.append(_agreement(exact, [pid for pid, _ in found], 10, tie=2e-3))
        # the distances it reports are the exact ones up to the int8 rounding
        assert np.allclose([d for _, d in found], [1.0 - exact[pid - 1] for pid, _ in found], atol=3e-3)
    assert np.mean(agreement) >= 0.98 and min(agreement) >= 0.9, agreement


def test_allowed_rows_limit_the_search_to_them():
    rng = np.random.default_rng(7)
    data = _model_like(rng, SHORTLIST_MIN * 2, 50)
    index = _quantized(data)
    allowed = rng.random(len(data)) < 0.1
    q = data[int(np.flatnonzero(~allowed)[0])]  # nearest overall is not allowed
    found = index.search(q, 10, allowed)
    assert len(found) == 10 and all(allowed[pid - 1] for pid, _ in found)
    exact = np.where(allowed, data @ q, -2.0)
    assert _agreement(exact, [pid for pid, _ in found], 10) == 1.0
    assert index.search(q, 10, np.zeros(len(data), dtype=bool)) == []


def test_cache_memory_is_a_byte_per_coordinate_not_four(docs_root, make_engine):
    engine = make_engine(docs_root)
    engine.index()
    cache = VectorCache()
    matrix = cache.matrix(engine.store)
    n = vector_rows(engine.store)
    assert matrix is not None and len(matrix.ids) == n > 0
    held = matrix.vectors
    assert held.codes.nbytes == n * DIM  # int8, not float32's 4 * n * DIM
    assert held.nbytes == store_vectors.cache_bytes(n, DIM) == n * (DIM + 48 + 12)
    assert held.nbytes < n * DIM * 4 / 3
    # a cache whose budget is below that keeps nothing: vec0 answers, still the right neighbours
    small = VectorCache(max_bytes=store_vectors.cache_bytes(n, DIM) - 1)
    assert small.matrix(engine.store) is None
    q = held.codes[0].astype(np.float32) * held.scales[0]
    assert knn(engine.store, q / np.linalg.norm(q), 1, small)[0][0] == int(held.ids[0])


def test_cache_loads_the_same_vectors_as_vec0_after_deletions(docs_root, make_engine):
    engine = make_engine(docs_root)
    engine.index()
    victim = sorted(docs_root.rglob("*.md"))[0]
    victim.unlink()  # leaves invalid slots in sqlite-vec's chunks
    engine.index()
    store, dim = engine.store, DIM
    n = vector_rows(store)
    fast = list(store_vectors._chunk_batches(store, dim))
    slow = list(store_vectors._stored_batches(store, dim))
    fast_ids, slow_ids = (np.concatenate([ids for ids, _ in b]) for b in (fast, slow))
    assert len(fast_ids) == n and sorted(fast_ids.tolist()) == sorted(slow_ids.tolist())
    by_id = {int(i): v for ids, vs in slow for i, v in zip(ids, vs, strict=True)}
    assert all(np.array_equal(by_id[int(i)], v) for ids, vs in fast for i, v in zip(ids, vs, strict=True))
    loaded = store_vectors.load_quantized(store, dim, n)
    assert sorted(loaded.ids.tolist()) == sorted(slow_ids.tolist())


def test_knn_allowed_ids_with_and_without_the_cache(docs_root, make_engine, minilm):
    engine = make_engine(docs_root)
    engine.index()
    store = engine.store
    q = minilm.embed_query("how long does the client wait for a server")
    nearest = knn(store, q, 3)
    allowed = np.array([pid for pid, _ in knn(store, q, 40)[10:]], dtype=np.int64)  # not the 10 nearest
    exact = knn(store, q, 5, None, allowed)
    cached = knn(store, q, 5, VectorCache(), allowed)
    assert len(exact) == len(cached) == 5
    assert {pid for pid, _ in exact} <= set(allowed.tolist()) and {pid for pid, _ in cached} <= set(allowed.tolist())
    assert not {pid for pid, _ in nearest} & {pid for pid, _ in cached}
    assert cached == exact  # the cache shortlists, vec0's exact distances decide
    assert knn(store, q, 5, VectorCache(), np.array([], dtype=np.int64)) == []


def test_cache_load_streams_chunks_without_sorting_them(docs_root, make_engine):
    # regression: an ORDER BY made SQLite copy every vector blob into a temporary b-tree before
    # the first row (1,060 MB peak and ~470 MB kept afterwards by a server thread at 16x)
    engine = make_engine(docs_root)
    engine.index()
    plan = " ".join(str(r[-1]) for r in engine.store.conn.execute("EXPLAIN QUERY PLAN " + store_vectors.CHUNKS_SQL))
    assert "TEMP B-TREE" not in plan.upper() and "SCAN" in plan.upper()
