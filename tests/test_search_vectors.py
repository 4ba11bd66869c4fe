"""The in-memory vector matrix (VectorCache) gives the same neighbours as sqlite-vec and follows changes."""

from __future__ import annotations

import pytest

from markdown_memory.models import SearchRequest
from markdown_memory.store import VectorCache, knn
from markdown_memory.store.testing import stored_passages


@pytest.fixture
def engine(docs_root, make_engine):
    eng = make_engine(docs_root)
    eng.index()
    return eng


def _new_ids(engine) -> set[int]:
    return {p.id for p in stored_passages(engine.store, "k8s.md")}


@pytest.mark.parametrize("question", ["how long does the client wait for a server", "kubernetes pods",
                                      "retry", "what does the configuration file hold"])
def test_matrix_knn_matches_vec0(engine, minilm, question):
    """One engine, one answer: the matrix only shortlists, so a process with the cache (the MCP
    server) gets vec0's neighbours and distances exactly, as the CLI does without it."""
    q = minilm.embed_query(question)
    cache = VectorCache()
    for k in (1, 3, 10, 40):
        sql = knn(engine.store, q, k)
        mem = knn(engine.store, q, k, cache)
        assert cache.matrix(engine.store) is not None  # the shortlist came from the matrix
        assert mem == sql


def test_matrix_is_reloaded_when_vectors_change(engine, docs_root, minilm):
    cache = VectorCache(reload_seconds=0.0)
    q = minilm.embed_query("kubernetes operator reconciliation loop")
    before = knn(engine.store, q, 3, cache)
    (docs_root / "k8s.md").write_text("# Operator\n\nThe Kubernetes operator runs a reconciliation loop.\n")
    engine.index()
    after = knn(engine.store, q, 3, cache)
    new_ids = _new_ids(engine)
    assert after[0][0] in new_ids and before[0][0] not in new_ids
    assert set(new_ids) <= set(cache.matrix(engine.store).ids.tolist())  # reloaded, not vec0


def test_changing_vectors_fall_back_to_vec0_until_a_reload_is_due(engine, docs_root, minilm):
    cache = VectorCache()
    q = minilm.embed_query("kubernetes operator reconciliation loop")
    knn(engine.store, q, 3, cache)  # loads the matrix
    (docs_root / "k8s.md").write_text("# Operator\n\nThe Kubernetes operator runs a reconciliation loop.\n")
    engine.index()
    after = knn(engine.store, q, 3, cache)  # matrix stale and reload not due: vec0 answers, fresh
    assert after[0][0] in _new_ids(engine)
    assert cache.matrix(engine.store) is None  # still the old matrix, not due for a reload


def test_the_server_engine_searches_through_one_vector_cache(docs_root, tmp_path, minilm, monkeypatch):
    from markdown_memory import embed
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    # the server's engine loads its model itself (in the background): it gets the session's
    real = embed.get_embedder
    monkeypatch.setattr(embed, "get_embedder",
                        lambda name, *args, **kwargs: minilm if name == "minilm" else real(name, *args, **kwargs))
    runtime = Runtime(Settings.load(docs_root, tmp_path / "index.db", "minilm", auto_index=False))
    engine = runtime.engine
    assert isinstance(engine._vector_cache, VectorCache)
    engine.index()
    assert engine._loader.embedder is minilm
    answer = engine.search(SearchRequest("how long does the client wait for a server"))
    assert answer.keyword_only is False and answer.results
    assert engine._vector_cache.matrix(engine.store) is not None
