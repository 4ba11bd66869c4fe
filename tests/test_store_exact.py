"""The exact distances of a shortlist, read from the plain copy ``vec_passages_exact``, are vec0's
KNN distances bit for bit, so the vector cache's rescoring answers as vec0 does (one engine, one
answer); the copy follows every write and delete, and a v7 database gets it filled once."""

from __future__ import annotations

import numpy as np
import pytest

from markdown_memory.store import Store, VectorCache, knn
from markdown_memory.store import vectors as vectors_mod
from markdown_memory.store.testing import consistency_problems, drop_exact_copy, has_exact_copy, stored_passages


@pytest.fixture
def engine(docs_root, make_engine):
    eng = make_engine(docs_root)
    eng.index()
    return eng


def _ids(store: Store) -> np.ndarray:
    return np.asarray(sorted(p.id for p in stored_passages(store) if p.has_vector), dtype=np.int64)


def test_exact_distances_equal_vec0_knn_distances(engine, minilm):
    store = engine.store
    ids = _ids(store)
    assert len(ids) > 20
    rng = np.random.default_rng(28)
    queries = [minilm.embed_query(q) for q in ("how long does the client wait for a server", "kubernetes pods",
                                               "retry", "what does the configuration file hold")]
    for _ in range(40):
        v = rng.standard_normal(len(queries[0])).astype(np.float32)
        queries.append(v / np.linalg.norm(v))
    for q in queries:
        for size in (1, 5, len(ids) // 3, len(ids)):
            shortlist = rng.choice(ids, size=size, replace=False)
            # every distance, bit for bit (k = the whole shortlist: vec0 returns them all)
            ours = vectors_mod._exact_among(store, q, size, shortlist)
            theirs = vectors_mod._vec0_knn_among(store, q, size, shortlist)
            assert theirs is not None and len(theirs) == size
            assert ours == theirs  # ids, distances and order (equal distances too)
            for k in (1, 3, 10):
                assert vectors_mod._exact_among(store, q, k, shortlist) == vectors_mod._vec0_knn_among(
                    store, q, k, shortlist)


def test_cache_knn_still_matches_vec0_and_uses_the_copy(engine, minilm, monkeypatch):
    q = minilm.embed_query("retry the request")
    cache = VectorCache()
    asked: list[int] = []
    real = vectors_mod._vec0_knn_among
    monkeypatch.setattr(vectors_mod, "_vec0_knn_among", lambda *a: asked.append(1) or real(*a))
    for k in (1, 3, 10):
        assert knn(engine.store, q, k, cache) == knn(engine.store, q, k)
    assert cache.matrix(engine.store) is not None
    assert not asked  # the copy answered every rescoring (three duplicate passages tie at the top)


def test_without_the_copy_vec0_rescores(engine, minilm, monkeypatch):
    monkeypatch.setattr(vectors_mod, "_exact_among", lambda *a: None)
    q = minilm.embed_query("retry the request")
    assert knn(engine.store, q, 5, VectorCache()) == knn(engine.store, q, 5)


def test_equal_distances_in_vec0_order(engine, minilm):
    """Duplicate passages (same text, same vector) tie; vec0's order among them is kept."""
    store = engine.store
    q = minilm.embed_query("retry the request")
    ids = _ids(store)
    for k in range(1, 8):
        ours = vectors_mod._exact_among(store, q, k, ids)
        assert ours == vectors_mod._vec0_knn_among(store, q, k, ids)
    dists = [d for _pid, d in vectors_mod._exact_among(store, q, len(ids), ids)]
    assert len(set(dists)) < len(dists)  # the fixture does have ties


def _vector_problems(store: Store) -> list[str]:
    """The vector invariants broken (FTS5's own integrity check is another matter)."""
    return [p for p in consistency_problems(store) if "vector" in p or "exact" in p]


def test_copy_follows_writes_and_deletes(engine, docs_root):
    assert has_exact_copy(engine.store)
    assert _vector_problems(engine.store) == []
    (docs_root / "k8s.md").write_text("# Operator\n\nThe Kubernetes operator runs a reconciliation loop.\n")
    engine.index()
    assert _vector_problems(engine.store) == []
    (docs_root / "k8s.md").unlink()
    engine.index()
    assert _vector_problems(engine.store) == []


def test_v7_database_gets_the_copy_filled_once(engine, minilm):
    db = engine.store.path
    drop_exact_copy(engine.store)
    assert not has_exact_copy(engine.store)
    assert _vector_problems(engine.store) == ["no exact copy of the vectors"]
    store = Store(db)  # reopening migrates v7 -> v8: filled from vec0
    try:
        assert has_exact_copy(store)
        assert _vector_problems(store) == []
        q = minilm.embed_query("kubernetes pods")
        assert knn(store, q, 5, VectorCache()) == knn(store, q, 5)
    finally:
        store.close()
