"""The int8-arithmetic MiniLM graph (embed/int8.py): built once, verified, cached, switchable,
and close enough to the shipped graph that it ranks the same (real model, no mocks)."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

from conftest import requires_minilm

from markdown_memory.embed import int8, minilm
from markdown_memory.embed.download import models_root

pytestmark = requires_minilm

DOCS = [
    "Install on Linux: download the tarball, extract it and add the bin folder to your PATH.",
    "Configure the retention period of the time-series database with --storage.tsdb.retention.time.",
    "Resolve merge conflicts by editing the marked hunks, then git add and git commit.",
    "The monitor pod is replaced after it has been out of quorum for ten minutes.",
]
QUERIES = [
    ("how do I set up the tool on a linux machine", 0),
    ("keep metrics for 30 days", 1),
    ("fix a conflicted merge", 2),
    ("how long before a failed mon is recreated", 3),
]


@pytest.fixture(autouse=True)
def _private_derived_cache(tmp_path, monkeypatch):
    """A model cache of this test's own (not the session's shared derived folder)."""
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_CACHE", str(tmp_path / "models"))


def test_default_is_int8_and_close_to_shipped_graph():
    fast = minilm.load_minilm(threads=1)
    plain = minilm.load_minilm(threads=1, int8_arithmetic=False)
    assert fast.arithmetic == "int8" and plain.arithmetic == "float32"
    assert plain.weights_id == minilm.SHIPPED_WEIGHTS_ID
    assert fast.weights_id.startswith(minilm.SHIPPED_WEIGHTS_ID + ":q8-") and fast.weights_id != plain.weights_id
    a, b = fast.embed_texts(DOCS), plain.embed_texts(DOCS)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.97, cos
    for emb in (fast, plain):  # both arithmetics put each query's answer first
        docs = emb.embed_texts(DOCS)
        for query, want in QUERIES:
            assert int(np.argmax(docs @ emb.embed_query(query))) == want, (emb.arithmetic, query)


def test_built_once_then_reused_and_verified():
    first = minilm.load_minilm(threads=1)
    files = sorted((models_root() / "derived").glob("*.onnx"))
    assert len(files) == 1
    stamp = files[0].stat().st_mtime_ns
    again = minilm.load_minilm(threads=1)
    assert again.weights_id == first.weights_id
    assert files[0].stat().st_mtime_ns == stamp  # not rebuilt


def test_corrupt_derived_graph_is_rebuilt():
    first = minilm.load_minilm(threads=1)
    (path,) = (models_root() / "derived").glob("*.onnx")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    again = minilm.load_minilm(threads=1)
    assert again.arithmetic == "int8" and again.weights_id == first.weights_id
    np.testing.assert_allclose(again.embed_query("hello"), first.embed_query("hello"), atol=1e-6)


@pytest.mark.parametrize("value", ["0", "off", "false"])
def test_switch_off_keeps_shipped_arithmetic(monkeypatch, value):
    monkeypatch.setenv(int8.ENV_SWITCH, value)
    emb = minilm.load_minilm(threads=1)
    assert emb.arithmetic == "float32" and emb.weights_id == minilm.SHIPPED_WEIGHTS_ID
    assert not (models_root() / "derived").exists()  # nothing built


def test_missing_onnx_package_falls_back_with_one_clear_warning(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx -> ImportError
    for name in [m for m in sys.modules if m.startswith("onnxruntime.quantization")]:
        monkeypatch.delitem(sys.modules, name)
    with caplog.at_level(logging.WARNING, logger="markdown_memory.embed.int8"):
        emb = minilm.load_minilm(threads=1)
    assert emb.arithmetic == "float32" and emb.weights_id == minilm.SHIPPED_WEIGHTS_ID
    warnings = [r.getMessage() for r in caplog.records if r.name == "markdown_memory.embed.int8"]
    assert len(warnings) == 1 and "install the 'onnx' package" in warnings[0]
    assert emb.embed_query("still works").shape == (384,)


def test_unwritable_cache_falls_back(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_CACHE", str(blocker))
    with caplog.at_level(logging.WARNING, logger="markdown_memory.embed.int8"):
        emb = minilm.load_minilm(threads=1)
    assert emb.arithmetic == "float32"
    assert any("int8 arithmetic unavailable" in r.getMessage() for r in caplog.records)


def test_quantization_advice_is_not_printed(capfd):
    minilm.load_minilm(threads=1)
    err = capfd.readouterr().err
    assert "pre-processing" not in err


def test_int8_vector_of_a_text_does_not_depend_on_its_batch():
    # regression: dynamic quantization scales activations per call, so batching texts together
    # changed each one's vector (up to 0.045 per element); every text now runs alone
    emb = minilm.load_minilm(threads=1)
    alone = emb.embed_texts([DOCS[0]])[0]
    with_others = emb.embed_texts([DOCS[1], DOCS[0], "x", DOCS[2] * 5])[1]
    np.testing.assert_array_equal(alone, with_others)
