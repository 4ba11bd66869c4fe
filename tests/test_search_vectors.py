"""The in-memory vector matrix gives the same neighbours as sqlite-vec and follows changes."""

from __future__ import annotations

import numpy as np
import pytest

from markdown_memory.search import vectors


@pytest.fixture
def engine(docs_root, make_engine):
    eng = make_engine(docs_root)
    eng.index()
    yield eng
    vectors.enable_cache(False)


def test_matrix_knn_matches_vec0(engine, minilm):
    q = minilm.embed_query("how long does the client wait for a server")
    vectors.enable_cache(False)
    sql = vectors.knn(engine.store, q, 10)
    vectors.enable_cache(True)
    mem = vectors.knn(engine.store, q, 10)
    # same distances in the same order (packed passages share a vector: ties may swap ids)
    assert np.allclose([d for _, d in mem], [d for _, d in sql], atol=1e-4)
    cutoff = sql[-1][1] - 1e-4
    assert {p for p, d in mem if d < cutoff} == {p for p, d in sql if d < cutoff}


def test_matrix_is_reloaded_when_vectors_change(engine, docs_root, monkeypatch, minilm):
    vectors.enable_cache(True)
    q = minilm.embed_query("kubernetes operator reconciliation loop")
    before = vectors.knn(engine.store, q, 3)
    monkeypatch.setattr(vectors, "RELOAD_SECONDS", 0.0)
    (docs_root / "k8s.md").write_text("# Operator\n\nThe Kubernetes operator runs a reconciliation loop.\n")
    engine.index()
    after = vectors.knn(engine.store, q, 3)
    new_ids = {r[0] for r in engine.store.conn.execute(
        "SELECT p.id FROM passages p JOIN documents d ON d.id = p.doc_id WHERE d.path = 'k8s.md'")}
    assert after[0][0] in new_ids and before[0][0] not in new_ids


def test_changing_vectors_fall_back_to_vec0_until_a_reload_is_due(engine, docs_root, minilm):
    vectors.enable_cache(True)
    q = minilm.embed_query("kubernetes operator reconciliation loop")
    vectors.knn(engine.store, q, 3)  # loads the matrix
    (docs_root / "k8s.md").write_text("# Operator\n\nThe Kubernetes operator runs a reconciliation loop.\n")
    engine.index()
    after = vectors.knn(engine.store, q, 3)  # matrix stale and reload not due: vec0 answers, fresh
    new_ids = {r[0] for r in engine.store.conn.execute(
        "SELECT p.id FROM passages p JOIN documents d ON d.id = p.doc_id WHERE d.path = 'k8s.md'")}
    assert after[0][0] in new_ids
