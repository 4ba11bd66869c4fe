"""The embedding path's cost levers keep answers identical: texts embedded in length order land
on the right rows with the vectors they get alone, and the query-vector cache returns the same
vector without embedding again, bounded in size."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import requires_minilm
from markdown_memory.embed.minilm import load_minilm
from markdown_memory.embed.query_cache import QueryVectorCache
from markdown_memory.index.embedding import embed_key
from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages, stored_vectors

pytestmark = requires_minilm

GUIDE = Path(__file__).parent / "fixtures" / "guide"


@pytest.fixture(scope="module")
def float32_minilm():
    """MiniLM with the shipped float32 arithmetic: batches of up to 8 texts, padded (the int8
    default runs one text per call, so only this one pads)."""
    return load_minilm(threads=1, int8_arithmetic=False)


class Recording:
    """Wraps an embedder: remembers which formatted text each (title, text) became and counts
    ``embed_query`` calls; everything else goes to the real model."""

    def __init__(self, inner, weights_id: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.weights_id = weights_id or inner.weights_id
        self.formatted: dict[str, str] = {}
        self.query_calls = 0

    def document_text(self, title: str, text: str) -> str:
        doc = self.inner.document_text(title, text)
        self.formatted[embed_key(title, text)] = doc
        return doc

    def embed_texts(self, texts):
        return self.inner.embed_texts(texts)

    def embed_query(self, query: str):
        self.query_calls += 1
        return self.inner.embed_query(query)


@pytest.mark.parametrize("which", ["int8", "float32"])
def test_indexed_vectors_equal_each_text_embedded_alone_on_its_own_rows(which, minilm, float32_minilm,
                                                                       make_engine, tmp_path):
    inner = minilm if which == "int8" else float32_minilm
    root = tmp_path / "docs"
    shutil.copytree(GUIDE, root)
    rec = Recording(inner)
    engine = make_engine(root)
    engine._loader._embedder = rec  # the indexer's real path, with this model
    report = engine.index()
    assert report.vectors_embedded > 20
    store = engine.store
    checked = 0
    for path in store.indexed_paths():
        doc_id = store.document_id(path)
        for key, blob in store.old_vectors(doc_id).items():
            alone = inner.embed_texts([rec.formatted[key]])[0]
            stored = np.frombuffer(blob, dtype=np.float32)
            np.testing.assert_allclose(stored, alone, atol=1e-5, err_msg=f"{path}: {rec.formatted[key][:60]!r}")
            checked += 1
    assert checked >= 10 and checked == len(set(rec.formatted))  # every text the run embedded


def test_texts_in_sorted_and_original_order_get_equal_vectors(float32_minilm):
    texts = ["x", "a longer passage about configuring the connection pool " * 6, "search ranking",
             "words " * 300, "medium length text about indexing markdown files", "y z"] * 5
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    original = float32_minilm.embed_texts(texts)
    in_order = float32_minilm.embed_texts([texts[i] for i in order])
    np.testing.assert_allclose(in_order, original[order], atol=1e-5)


def test_query_cache_returns_the_same_vector_without_embedding_again(minilm):
    rec = Recording(minilm)
    cache = QueryVectorCache(capacity=4)
    first = cache.vector(rec, "how do I rotate the logs")
    again = cache.vector(rec, "how do I rotate the logs")
    assert rec.query_calls == 1
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first, minilm.embed_query("how do I rotate the logs"), atol=1e-6)
    with pytest.raises(ValueError):
        again[0] = 1.0  # a caller cannot change what the next search gets


def test_query_cache_is_bounded_and_drops_the_least_recently_used(minilm):
    rec = Recording(minilm)
    cache = QueryVectorCache(capacity=3)
    for q in ["one", "two", "three"]:
        cache.vector(rec, q)
    cache.vector(rec, "one")  # now "two" is the oldest
    cache.vector(rec, "four")
    assert len(cache) == 3 and rec.query_calls == 4
    cache.vector(rec, "one")
    assert rec.query_calls == 4  # still cached
    cache.vector(rec, "two")
    assert rec.query_calls == 5  # was dropped, embedded again


def test_query_cache_never_returns_another_models_vector(minilm, float32_minilm):
    cache = QueryVectorCache()
    a = cache.vector(minilm, "install on linux")
    b = cache.vector(float32_minilm, "install on linux")
    assert minilm.weights_id != float32_minilm.weights_id
    np.testing.assert_allclose(b, float32_minilm.embed_query("install on linux"), atol=1e-6)
    assert len(cache) == 2 and not np.array_equal(a, b)


def test_repeated_search_embeds_the_query_once(minilm, make_engine, tmp_path):
    root = tmp_path / "docs"
    shutil.copytree(GUIDE, root)
    engine = make_engine(root)
    engine.index()
    rec = Recording(minilm)
    engine._loader._embedder = rec
    first = engine.search(SearchRequest("how do I install it"))
    second = engine.search(SearchRequest("how do I install it"))
    assert rec.query_calls == 1
    assert not first.keyword_only
    assert first.results and [h.heading_path for h in first.results] == [h.heading_path for h in second.results]


def test_section_vectors_are_the_normalised_mean_of_their_passages(make_engine, tmp_path):
    """Section vectors come from running sums held during the run, not from reading the passage
    vectors back: still the normalised mean of what is stored, for every section."""
    root = tmp_path / "docs"
    shutil.copytree(GUIDE, root)
    engine = make_engine(root)
    engine.index()
    (root / "install.md").write_text((root / "install.md").read_text() + "\n## Upgrading\n\nRun the installer again.\n")
    engine.index()  # a second run: some sections mix old and new passage vectors
    passage_blobs, section_blobs = stored_vectors(engine.store)
    passages = {sid: [np.frombuffer(b, dtype=np.float32) for b in blobs] for sid, blobs in passage_blobs.items()}
    sections = {sid: np.frombuffer(blob, dtype=np.float32) for sid, blob in section_blobs.items()}
    with_passages = {p.section_id for p in stored_passages(engine.store)}
    assert set(sections) == with_passages and len(sections) > 10
    for sid, vec in sections.items():
        mean = np.mean(passages[sid], axis=0)
        np.testing.assert_allclose(vec, mean / np.linalg.norm(mean), atol=1e-5)
