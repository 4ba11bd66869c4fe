"""The int8-arithmetic MiniLM graph (embed/int8.py): built once, verified, cached, switchable,
and close enough to the shipped graph that it ranks the same (real model, no mocks).

Building the graph takes ~2-3 s, so only the tests about building build one; tests about a
graph already in the cache start from a copy of the one the session's ``minilm`` was derived
with (``prebuilt``), and tests that only embed use that loaded model (``shared``)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import derived_models, requires_minilm
from markdown_memory.embed import int8, minilm
from markdown_memory.embed.download import models_root
from markdown_memory.models import SearchRequest

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


@pytest.fixture
def shared(request):
    """The session's loaded MiniLM (the ``minilm`` fixture; that name is the module here): what
    ``get_embedder("minilm")`` loads by default, the int8 graph."""
    emb = request.getfixturevalue("minilm")
    assert emb.arithmetic == "int8"
    return emb


@pytest.fixture
def prebuilt(shared):
    """``prebuilt()`` puts a copy of the int8 graph ``shared`` runs, with its side file (not its
    stat stamp), into this test's cache and returns the cache's derived folder: what a finished
    build leaves. A copy, not a link: tests corrupt it."""

    def copy() -> Path:
        folder = models_root() / "derived"
        folder.mkdir(parents=True, exist_ok=True)
        made = sorted(p for p in derived_models().iterdir() if p.suffix in (".onnx", ".json") and not p.name.startswith("."))
        assert [p.suffix for p in made] == [".json", ".onnx"], made
        for path in made:
            shutil.copyfile(path, folder / path.name)
        return folder

    return copy


def test_default_is_int8_and_close_to_shipped_graph(shared):
    fast = shared
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


def test_built_once_quietly_then_reused_and_verified(capfd):
    first = minilm.load_minilm(threads=1)
    assert first.arithmetic == "int8"
    # onnxruntime.quantization's advice for image models is not passed on to our users
    assert "pre-processing" not in capfd.readouterr().err
    files = sorted((models_root() / "derived").glob("*.onnx"))
    assert len(files) == 1
    stamp = files[0].stat().st_mtime_ns
    again = minilm.load_minilm(threads=1)
    assert again.weights_id == first.weights_id
    assert files[0].stat().st_mtime_ns == stamp  # not rebuilt


def test_corrupt_derived_graph_is_rebuilt(prebuilt):
    prebuilt()
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


def test_int8_vector_of_a_text_does_not_depend_on_its_batch(shared):
    # regression: dynamic quantization scales activations per call, so batching texts together
    # changed each one's vector (up to 0.045 per element); every text now runs alone
    emb = shared
    alone = emb.embed_texts([DOCS[0]])[0]
    with_others = emb.embed_texts([DOCS[1], DOCS[0], "x", DOCS[2] * 5])[1]
    np.testing.assert_array_equal(alone, with_others)


def _docs(root):
    root.mkdir()
    (root / "install.md").write_text("# Install\n\n## Linux\n\nDownload the tarball and add bin to PATH.\n")
    (root / "ops.md").write_text("# Operations\n\n## Retention\n\nKeep metrics for thirty days with the retention flag.\n")
    return root


def _engine(root, db, model=None):
    """An Engine with the minilm preset; ``model`` (the session's int8 one) saves loading it."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    return Engine(Settings.load(root, db, "minilm"), embedder=model)


def test_switching_arithmetic_re_embeds_and_a_no_change_run_does_not_load_the_model(tmp_path, monkeypatch,
                                                                                   prebuilt, shared):
    # regression: the skip-the-model shortcut compared only the preset name, so after a switch
    # nothing was re-embedded and every search fell back to keyword-only, saying vectors were
    # "still being computed" while nothing ran
    prebuilt()  # this machine has built the int8 graph
    root, db = _docs(tmp_path / "docs"), tmp_path / "index.db"
    first = _engine(root, db, shared)
    assert first.index().vectors_embedded > 0
    q8_id = first.store.vector_space()[0]
    assert ":q8-" in q8_id
    first.close()

    again = _engine(root, db)
    report = again.index()
    assert report.vectors_embedded == 0 and again._loader.embedder is None  # nothing changed: model not loaded
    again.close()

    monkeypatch.setenv(int8.ENV_SWITCH, "0")
    plain = _engine(root, db)
    passages = plain.store.counts()["passages"]
    report = plain.index()
    assert report.vectors_embedded + report.vectors_reused == passages and report.vectors_embedded > 0
    assert plain.store.vector_space()[0] == minilm.SHIPPED_WEIGHTS_ID
    answer = plain.search(SearchRequest("keep metrics for a month"))
    assert answer.keyword_only is False and answer.results[0].file_path == "ops.md"
    plain.close()

    monkeypatch.delenv(int8.ENV_SWITCH)
    back = _engine(root, db, shared)
    report = back.index(force=True)  # regression: --force counted the old build's vectors as reused
    assert report.vectors_reused == 0 and report.vectors_embedded == passages
    assert back.store.vector_space()[0] == q8_id
    back.close()


def test_search_over_vectors_of_another_build_says_so_and_asks_for_a_run(tmp_path, monkeypatch, prebuilt, shared):
    prebuilt()
    root, db = _docs(tmp_path / "docs"), tmp_path / "index.db"
    first = _engine(root, db, shared)
    first.index()
    first.close()
    monkeypatch.setenv(int8.ENV_SWITCH, "0")
    plain = _engine(root, db)
    status = plain.status()  # status tells the same story as the search below, before any load
    assert status.keyword_only is True and "another build" in status.message
    answer = plain.search(SearchRequest("retention"))  # no index run in between (the server's case)
    assert answer.keyword_only is True
    assert "another build of the minilm model" in answer.message and "still being computed" not in answer.message
    assert answer.message.endswith(f"; run `markdown-memory --embedder minilm index {root}` to re-embed them")
    assert plain._activity.vectors_due is True  # the server's auto-indexer starts a run on the next call
    plain.close()


def test_expected_weights_id_without_loading(monkeypatch, prebuilt, shared):
    assert minilm.expected_minilm_weights_id() is None  # nothing built yet: unknown
    prebuilt()
    # read from the cached graph's side file: the id of the model a load would run
    assert minilm.expected_minilm_weights_id() == shared.weights_id
    monkeypatch.setenv(int8.ENV_SWITCH, "0")
    assert minilm.expected_minilm_weights_id() == minilm.SHIPPED_WEIGHTS_ID


def test_derived_graph_onnxruntime_refuses_falls_back_with_the_fix(caplog, prebuilt):
    (path,) = prebuilt().glob("*.onnx")
    path.write_bytes(b"not an onnx graph at all" * 1000)
    side = path.with_suffix(".json")
    record = json.loads(side.read_text())
    record["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()  # passes the integrity check
    record["size"] = path.stat().st_size
    side.write_text(json.dumps(record))
    with caplog.at_level(logging.WARNING, logger="markdown_memory.embed.int8"):
        emb = minilm.load_minilm(threads=1)
    assert emb.arithmetic == "float32"
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "markdown_memory.embed.int8"]
    assert "MARKDOWN_MEMORY_INT8_COMPUTE=0" in warning and str(models_root() / "derived") in warning


def test_leftovers_of_a_killed_build_are_removed_and_the_graph_is_readable_by_others():
    folder = models_root() / "derived"
    folder.mkdir(parents=True)
    stem = int8._stem(minilm.MODEL_SPEC.sha256)
    (folder / f".{stem}-dead1.onnx").write_bytes(b"")
    build = folder / f".{stem}-dead1.onnx-build-x"
    build.mkdir()
    (build / "folded.onnx").write_bytes(b"x" * 1000)
    minilm.load_minilm(threads=1)
    names = [f"{stem}.json", f"{stem}.json.stamp", f"{stem}.lock", f"{stem}.onnx"]
    assert sorted(p.name for p in folder.iterdir()) == names
    assert (folder / f"{stem}.onnx").stat().st_mode & 0o044 == 0o044


def test_derived_graph_is_hashed_once_then_checked_by_its_stat_stamp(monkeypatch, prebuilt):
    from markdown_memory.embed import files

    prebuilt()
    first = minilm.load_minilm(threads=1)
    (path,) = (models_root() / "derived").glob("*.onnx")
    hashed = []
    real = files.sha256_file
    monkeypatch.setattr(files, "sha256_file", lambda p: hashed.append(Path(p).name) or real(p))
    minilm.load_minilm(threads=1)
    assert path.name not in hashed  # the stamp spared the ~60 ms hash
    os.utime(path, None)  # any change to the file's stat: hash it again
    again = minilm.load_minilm(threads=1)
    assert path.name in hashed and again.weights_id == first.weights_id
